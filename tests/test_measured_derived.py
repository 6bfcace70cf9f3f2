"""A result whose figures were re-derived on a CPU from other results says so beside its date and
clock (the provenance table and its "measured on" line), so they are not read as that run's."""

from gpulab.plots.measured import appendix


def test_derived_note_names_each_source_with_its_date():
    res = {"sources": {"reduction": "2026-12-02T03:07:34Z", "latency": None}}
    note = appendix._derived_note(res)
    assert (
        note == "; its figures derived on a CPU from reduction.json (2026-12-02 03:07 UTC) and latency.json"
    )


def test_no_note_without_sources():
    assert appendix._derived_note({}) == ""
    assert appendix._derived_note({"sources": "reduction"}) == ""


def test_provenance_marks_the_recorded_derived_result():
    df = appendix.provenance()
    row = df[df["file"] == "reduction_in_flight.json"].iloc[0, 1]
    assert "derived on a CPU from reduction.json" in row
    # the clock is the source runs', so it comes after them and says so
    assert row.index("derived on a CPU") < row.index("SM clock") and "(recorded by those runs)" in row


def test_with_clock_orders_the_parts():
    assert appendix._with_clock({}, "SM clock 1980 MHz") == "; SM clock 1980 MHz"
    assert appendix._with_clock({}, None) == ""
    src = {"sources": {"reduction": None}}
    assert appendix._with_clock(src, None) == "; its figures derived on a CPU from reduction.json"

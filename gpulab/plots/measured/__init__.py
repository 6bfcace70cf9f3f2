"""The appendix "Measured on an H200": every JSON a ``benchmarks/`` script wrote, one section each.

One module per group of benchmarks (memory, divergence, occupancy, reduction, tensor_cores,
serial, runs) holds its headlines, tables, figures and ``SECTIONS``; ``core`` finds, loads and
labels the files and shows tables and figures within the book's column; ``appendix`` puts the
sections in order and makes the calls the notebook uses.

For each results file this module knows which script wrote it, how to label it (GPU, driver,
versions, date: read from the file, never typed in), which headline figures to compute from it
(a ratio against a peer library or a datasheet, with the target the issues set, met or missed),
and which figure or table shows it. Figures reuse the chapters' own plotting functions.

    from gpulab.plots import measured
    measured.available()                # names of the JSON files in gpulab/data/results/
    measured.scorecard()                # every target, measured value and verdict, as a table
    measured.show("reduction")          # label, method, headlines, figure/table of one file

A file that is missing (``bandwidth.json`` before its benchmark has run, every file after a plain
``pip install``) gives a sentence saying how to produce it, never an error.
"""

from .appendix import (
    SECTIONS,
    figure,
    figures,
    glue_other_tables,  # noqa: F401
    headlines,
    missing_message,
    provenance,  # noqa: F401
    scorecard,
    show,
    table,
    uncovered,
)
from .core import (
    COLUMN_IN,
    WIDTH,
    Headline,
    Section,
    available,
    display_compared,  # noqa: F401
    display_table,  # noqa: F401
    glue_table,  # noqa: F401
    markdown_table,  # noqa: F401
    environment,
    label,
    load,
    results_dir,
    run_info,
    size_range,
    text_width,
)
from .divergence import fidelity_counts  # noqa: F401
from .serial import amdahl_fit, amdahl_reading  # noqa: F401

__all__ = [
    "SECTIONS",
    "Section",
    "Headline",
    "results_dir",
    "available",
    "load",
    "uncovered",
    "run_info",
    "label",
    "headlines",
    "scorecard",
    "table",
    "figure",
    "show",
    "provenance",
    "missing_message",
    "figures",
    "glue_other_tables",
    "display_compared",
    "display_table",
    "glue_table",
    "markdown_table",
    "text_width",
    "WIDTH",
    "size_range",
    "environment",
    "fidelity_counts",
    "amdahl_fit",
    "amdahl_reading",
    "COLUMN_IN",
]

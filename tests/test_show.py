"""gpulab.show's text helpers: what the book prints fits its output column."""

from gpulab import show


def test_print_wrapped_wraps_only_long_lines(capsys):
    short = "short line"
    long = "word " * 40
    show.print_wrapped(f"{short}\n{long.strip()}")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == short
    assert len(out) > 2 and all(len(line) <= show.OUTPUT_COLUMNS for line in out)
    assert all(line.startswith("  ") for line in out[2:])  # hanging indent on continuations
    assert " ".join(w for line in out[1:] for w in line.split()) == long.strip()


def test_print_wrapped_keeps_an_unbreakable_word_whole(capsys):
    path = "gpulab/" + "x" * 90 + ".py"
    show.print_wrapped(path)
    assert capsys.readouterr().out.strip() == path

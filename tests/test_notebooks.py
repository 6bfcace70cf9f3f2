"""Notebook conventions every chapter follows (CONTRIBUTING.md)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))

COLAB_CELL = '''# On Colab, install gpulab first (does nothing elsewhere).
import sys
if "google.colab" in sys.modules:
    %pip install -q "gpulab[colab] @ git+https://github.com/gpulab/gpulab"'''


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_there_are_chapters():
    assert NOTEBOOKS, "no notebooks in chapters/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_stripped(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.outputs or c.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs or execution counts"
    assert "widgets" not in nb.metadata, f"{path.name}: widget state saved in metadata"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cells_are_colab_install_then_import(path):
    cells = code_cells(nbformat.read(path, as_version=4))
    assert len(cells) >= 2
    assert cells[0].source.strip() == COLAB_CELL
    assert cells[1].source.strip() == "import gpulab"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_is_a_valid_python3_notebook(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"

"""Markers for a fast inner loop: `pytest -m "not slow"` skips the book build, the homework
grading runs and the repeated chapter executions; CI runs everything (plain `pytest`).

Markers are given per test file here, in one place, so a new slow file is one line to add.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MARKERS = {
    "slow": "takes more than a few seconds (book build, homework grading, chapter executions)",
    "book": "builds the whole book (jupyter-book build) or reads its HTML",
    "grading": "runs Otter-Grader (otter assign / otter run) on the homework",
    "browser": "opens the built pages in headless Chromium",
    "gpu": "needs an NVIDIA GPU (skips without one)",
}

# file name -> markers for every test in it
FILE_MARKERS = {
    "test_book.py": ("slow", "book"),
    "test_book_html.py": ("slow", "book"),
    "test_browser.py": ("slow", "book", "browser"),
    "test_pages.py": ("slow", "book", "browser"),
    "test_homework.py": ("slow", "grading"),
    "test_grading_round3_otter.py": ("slow", "grading"),
    "test_gradescope.py": ("slow", "grading"),
    "test_chapter_stalls.py": ("slow",),
    "test_colab.py": ("slow",),
    "test_wheel.py": ("slow",),
    "test_notebooks.py": ("slow",),
    "test_benchmarks_run_notebooks.py": ("slow",),
    "test_sim_vs_numbasim.py": ("slow",),
    "test_gpu_backend.py": ("gpu",),
}

# single tests that take tens of seconds (durations measured with --durations)
TEST_MARKERS = {
    "test_dram_roofline_fraction_ranks_a_strided_copy_below_a_coalesced_one": ("slow",),
    "test_scan_of_2_to_the_20_elements_and_its_counters": ("slow",),
    "test_coalescing_explorer_writes_answer_and_check": ("slow",),
    "test_bank_explorer_and_check": ("slow",),
    "test_every_glued_figure_has_a_numbered_captioned_block": ("slow",),
    # tests/test_start_page.py: the built site (its archive writer's own tests are fast)
    "test_start_page_links_the_archive_of_every_notebook": ("slow", "book"),
    "test_start_page_chapter_table_gives_each_chapter_its_number": ("slow", "book"),
}


def pytest_configure(config):
    for name, help_text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {help_text}")


def pytest_collection_modifyitems(config, items):
    for item in items:
        for name in FILE_MARKERS.get(Path(str(item.fspath)).name, ()):
            item.add_marker(getattr(pytest.mark, name))
        for name in TEST_MARKERS.get(item.originalname, ()):
            item.add_marker(getattr(pytest.mark, name))

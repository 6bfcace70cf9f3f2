"""Hostile cells added to every homework's solution by tests/test_homework.py.

``CHAOS`` cells must all be survived: the notebook still earns full marks, because each attack
only breaks its own cell (an exception, an endless loop cut by the cell time limit, sys.exit(),
megabytes of output, reading the test files). ``DELETE_TESTS`` must not earn full marks.
"""

CHAOS = [
    'raise RuntimeError("a cell that raises")',
    "import sys\nsys.exit()",
    'print("x" * 4_000_000)   # 4 MB of output\nfor _ in range(2000):\n    print("line" * 50)',
    'import glob\nfor f in glob.glob("tests/*.py"):\n    print(open(f).read()[:200])',
    "while True:   # an endless loop in plain Python\n    pass",
    (
        "while True:   # ...that swallows the first interrupt\n    try:\n        while True:\n"
        "            pass\n    except Exception:\n        pass"
    ),
]

#: the cheaper set used for every homework but the first (one endless loop, the one that swallows)
CHAOS_SHORT = CHAOS[:4] + CHAOS[5:]

DELETE_TESTS = 'import shutil, os\nshutil.rmtree("tests", ignore_errors=True)\nprint(os.listdir("."))'

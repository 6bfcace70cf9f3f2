"""``python -m gpulab.grading grade | assign | otter ...`` (see :func:`gpulab.grading.cli.main`)."""

import sys

from gpulab.grading.cli import main

sys.exit(main())

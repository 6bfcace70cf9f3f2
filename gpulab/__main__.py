"""`python -m gpulab` runs `gpulab doctor`."""

from gpulab.doctor import main

raise SystemExit(main())

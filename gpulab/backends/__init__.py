"""The backends a launch can run on: a registry of modules, each with ``available()`` and
``launch(kernel, grid, block, args, shared_bytes, **options)`` returning a ``Report``.

``gpulab.launch`` validates the launch and picks one from :data:`REGISTRY`; a backend never
imports ``gpulab.launch``. Adding one is a module with those two functions and a line here.
"""

import importlib

#: backend name -> module (imported on first use: the GPU one pulls in numba.cuda's driver)
REGISTRY = {
    "sim": "gpulab.backends.sim",
    "gpu": "gpulab.backends.gpu",
    "numba-sim": "gpulab.backends.numbasim",
}


def get(name):
    """The backend module registered under ``name``."""
    return importlib.import_module(REGISTRY[name])


def available(name):
    """Whether backend ``name`` can run here."""
    return get(name).available()

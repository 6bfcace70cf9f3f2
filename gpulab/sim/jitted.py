"""Recognising numba kernels and device functions, and the Python function behind them."""


def python_function(kernel):
    """The plain Python function behind a numba kernel, device function or fake kernel."""
    for attr in ("py_func", "fn", "pyfunc"):
        fn = getattr(kernel, attr, None)
        if callable(fn) and hasattr(fn, "__code__"):
            return fn
    if hasattr(kernel, "__code__"):
        return kernel
    return None


def is_jitted(value):
    """True for an object numba made from a Python function (``@cuda.jit`` kernel or device
    function, or one of Numba's simulator's fake kernels)."""
    mod = type(value).__module__ or ""
    return mod.startswith("numba") and python_function(value) is not None

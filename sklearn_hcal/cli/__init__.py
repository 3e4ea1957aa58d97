"""The ``hcal`` command line (also ``python -m sklearn_hcal``).

An application on top of the library: nothing in :mod:`sklearn_hcal`'s core
imports this package. Its names are resolved on first use, so that ``hcal``
answers before scikit-learn and PyTorch are imported.
"""

from .._lazy import attach

_PUBLIC = {
    "build_parser": "._main",
    "main": "._main",
    "run_demo": "._demo",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)

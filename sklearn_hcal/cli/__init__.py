"""The ``hcal`` command line (also ``python -m sklearn_hcal``).

An application on top of the library: nothing in :mod:`sklearn_hcal`'s core
imports this package.
"""

from ._demo import run_demo
from ._main import build_parser, main

__all__ = ["build_parser", "main", "run_demo"]

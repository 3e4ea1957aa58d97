"""PEP 562 lazy attribute loading for the public namespaces.

Public names live in private modules; resolving them on first access keeps
``import sklearn_hcal`` cheap (no torch, no matplotlib) and lets each module
import only what it needs.
"""

from __future__ import annotations

import importlib


def attach(package: str, mapping: dict[str, str]):
    """Return ``(__getattr__, __dir__)`` resolving ``name -> package.module``."""

    def __getattr__(name: str):
        try:
            module = mapping[name]
        except KeyError:
            raise AttributeError(
                f"module {package!r} has no attribute {name!r}"
            ) from None
        value = getattr(importlib.import_module(module, package), name)
        return value

    def __dir__():
        return sorted(mapping)

    return __getattr__, __dir__

"""``one_blas_thread`` limits every BLAS the process has loaded, with its
lookup of the libraries kept while no module is imported."""

from __future__ import annotations

import sys
import types

from threadpoolctl import threadpool_info

from sklearn_hcal.utils import _threads


def test_every_blas_is_limited_inside_and_restored_after():
    # threadpool_info looks the libraries up afresh: an independent count
    before = [(m["filepath"], m["num_threads"]) for m in threadpool_info()]
    with _threads.one_blas_thread():
        inside = [m for m in threadpool_info() if m["user_api"] == "blas"]
    assert inside and all(m["num_threads"] == 1 for m in inside)
    assert [(m["filepath"], m["num_threads"]) for m in threadpool_info()] == before


def test_the_lookup_is_kept_until_a_module_is_imported(monkeypatch):
    first = _threads._controller()
    assert _threads._controller() is first
    # an import may load another BLAS: the libraries are looked up again
    monkeypatch.setitem(sys.modules, "_hcal_new_module", types.ModuleType("m"))
    again = _threads._controller()
    assert again is not first
    assert _threads._controller() is again

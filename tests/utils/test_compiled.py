"""The switch between compiled kernels and their numpy paths.

A result must never depend on whether numba is installed or switched off;
these tests protect the switch itself (the kernels' equality with their numpy
paths is tested beside each kernel's subject).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import sklearn_hcal.utils._compiled as compiled
from sklearn_hcal.metrics import dispersion_loss
from sklearn_hcal.utils._compiled import compiled_available, kernel, use_compiled


@kernel
def _add_one(x):
    return x + 1.0


@pytest.fixture
def fresh_state(monkeypatch):
    """The module's state as a new process would find it."""
    monkeypatch.setitem(compiled._STATE, "enabled", None)
    return compiled._STATE


@pytest.mark.parametrize("value", ["0", "false", "No", " off "])
def test_environment_variable_turns_the_kernels_off(value, fresh_state, monkeypatch):
    monkeypatch.setenv("SKLEARN_HCAL_COMPILED", value)
    assert not compiled_available()
    assert _add_one.get() is None


def test_without_numba_every_kernel_is_none(fresh_state, monkeypatch):
    monkeypatch.setitem(fresh_state, "numba", False)
    monkeypatch.delenv("SKLEARN_HCAL_COMPILED", raising=False)
    assert not compiled_available()
    assert _add_one.get() is None


def test_use_compiled_restores_the_previous_setting(fresh_state):
    with use_compiled(False):
        assert not compiled_available()
        assert _add_one.get() is None
        with use_compiled(True):
            pass
        assert not compiled_available()
    assert fresh_state["enabled"] is None


def test_use_compiled_restores_after_an_error(fresh_state):
    with pytest.raises(RuntimeError):
        with use_compiled(False):
            raise RuntimeError
    assert fresh_state["enabled"] is None


def test_compiled_kernel_runs_when_numba_is_installed(fresh_state, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv("SKLEARN_HCAL_COMPILED", raising=False)
    with use_compiled(True):
        compiled_add = _add_one.get()
        assert compiled_add is not None
        assert compiled_add(np.float64(1.5)) == 2.5
        # a plain Python function has no numba signatures
        assert hasattr(compiled_add, "signatures")


def test_a_metric_is_the_same_with_the_kernels_off():
    # the same bits through the public function, whichever path runs
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    Y = rng.multinomial(4, np.ones(6) / 6, size=500)
    P = rng.dirichlet(np.ones(6), size=500)
    with use_compiled(True):
        on = dispersion_loss(Y, P)
    with use_compiled(False):
        off = dispersion_loss(Y, P)
    assert on == off


def test_a_broken_numba_install_warns_once_and_runs_numpy(
    fresh_state, monkeypatch, tmp_path
):
    # numba present but failing on its own import (e.g. built for another
    # numpy): the user asked for the kernels, so the fallback is said
    fake = tmp_path / "numba"
    fake.mkdir()
    (fake / "__init__.py").write_text("import a_module_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.setitem(fresh_state, "numba", None)
    with pytest.warns(RuntimeWarning, match="numba is installed but cannot be"):
        assert not compiled_available()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _add_one.get() is None  # decided once: no second warning


def test_numba_not_installed_is_silent(fresh_state, monkeypatch):
    # the extra is optional: its absence is the documented default
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setitem(fresh_state, "numba", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not compiled_available()

"""Test-suite hooks for the package's doctests and the tests alike.

The ``slow`` mark must be honest: ``make test-fast`` deselects it, so a test
that trains a network (seconds each) without it would silently make the fast
run slow. Fixtures for the tests are in ``tests/conftest.py``.
"""

import importlib.util
import re

import pytest

# skorch's fit_loop is wrapped (not replaced) once per session to record that a
# network trained during a test.
_TRAINED: list = []


def pytest_configure(config):
    if importlib.util.find_spec("skorch") is None:
        return
    import skorch.net

    fit_loop = skorch.net.NeuralNet.fit_loop
    if getattr(fit_loop, "_hcal_recorded", False):
        return

    def recorded_fit_loop(self, *args, **kwargs):
        _TRAINED.append(type(self).__name__)
        return fit_loop(self, *args, **kwargs)

    recorded_fit_loop._hcal_recorded = True
    skorch.net.NeuralNet.fit_loop = recorded_fit_loop


@pytest.fixture(autouse=True)
def _slow_mark_is_honest(request):
    _TRAINED.clear()
    yield
    if _TRAINED and request.node.get_closest_marker("slow") is None:
        pytest.fail(
            f"{request.node.nodeid} trains a network ({_TRAINED[0]}) but is not "
            "marked @pytest.mark.slow (make test-fast must skip it)",
            pytrace=False,
        )


_NETWORK_NAMES = re.compile(
    r"make_soft_label_net|SoftLabelNetClassifier|MCDropoutClassifier|"
    r"TestTimeAugmentationClassifier|SmallCNN|NeuralNet|HumanMetricsCallback|"
    r"TransformerPerspectivistClassifier"
)
# calls that train a network inside (the demo's CNN)
_TRAINING_CALLS = re.compile(r"\brun_demo\(")


def pytest_collection_modifyitems(config, items):
    # Doctests live in the package, outside this folder's fixtures: an example
    # that fits a network is marked slow here, so `make test-fast` skips it.
    for item in items:
        dtest = getattr(item, "dtest", None)
        if dtest is None:
            continue
        source = "".join(example.source for example in dtest.examples)
        trains = _NETWORK_NAMES.search(source) and ".fit(" in source
        if trains or _TRAINING_CALLS.search(source):
            item.add_marker(pytest.mark.slow)

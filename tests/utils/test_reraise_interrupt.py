"""``reraise_interrupt``: a Ctrl-C that code inside swallows still stops.

The swallowing loop is skorch's (``NeuralNet.partial_fit`` catches
``KeyboardInterrupt``); a real SIGINT is sent to this process.
"""

import os
import signal
import sys
import time

import pytest

from sklearn_hcal.utils._interrupt import reraise_interrupt

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="os.kill(SIGINT) to oneself is POSIX"
)


def _swallowing_loop(steps):
    # What skorch's partial_fit does with Ctrl-C: stop the loop, return.
    try:
        for _ in range(200):
            steps.append(1)
            if len(steps) == 3:
                os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.001)
    except KeyboardInterrupt:
        pass


def test_swallowed_interrupt_is_raised_after_the_block():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    steps, after = [], []
    with pytest.raises(KeyboardInterrupt):
        with reraise_interrupt():
            _swallowing_loop(steps)
            after.append("the rest of the block runs")
    assert 3 <= len(steps) < 200  # the loop did stop at the signal
    assert after  # only the swallowing code decides inside the block
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_nested_blocks_and_no_signal():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with reraise_interrupt():
            with reraise_interrupt():
                _swallowing_loop(steps)
            pytest.fail("the inner block must raise")  # pragma: no cover
    with reraise_interrupt():
        pass  # no signal, nothing raised
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with reraise_interrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)  # ignored, as asked
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, previous)

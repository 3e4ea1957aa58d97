"""The six aggregators, listed once for every test that runs them all.

A new aggregator is added here and every such test runs it;
``test_estimator_checks.py::test_the_list_holds_every_public_aggregator``
fails while the public face has one this list lacks.
"""

from __future__ import annotations

from sklearn_hcal.aggregation import (
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    OneCoinDawidSkene,
    Wawa,
)

AGGREGATORS = (MajorityVote, Wawa, DawidSkene, OneCoinDawidSkene, GLAD, MACE)


def aggregators(**params) -> list:
    """One instance of each aggregator, ``params[class name]`` its parameters
    (a name that is not an aggregator's raises, so a typo cannot drop them)."""
    unknown = set(params) - {Model.__name__ for Model in AGGREGATORS}
    if unknown:
        raise KeyError(f"not aggregators: {sorted(unknown)}")
    return [Model(**params.get(Model.__name__, {})) for Model in AGGREGATORS]

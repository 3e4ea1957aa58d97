"""The posteriors as soft labels: a classifier trained on them."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal.aggregation import DawidSkene

from ._tables import crowd_table


def test_soft_label_classifier_trains_on_the_posteriors():
    X, _ = crowd_table(80, 8, per_item=4, seed=8)
    posteriors = DawidSkene(alpha=1.0).fit_transform(X)
    rng = np.random.default_rng(0)
    features = pd.DataFrame(
        rng.normal(size=(len(posteriors), 3)), index=posteriors.index
    )
    clf = SoftLabelClassifier(LogisticRegression()).fit(features, posteriors)
    assert list(clf.classes_) == list(posteriors.columns)
    # the soft-label cross-entropy: one row per (item, class), weighted by
    # the posterior, fitted directly
    K = posteriors.shape[1]
    P = posteriors.to_numpy()
    keep = P.ravel() > 0
    direct = LogisticRegression().fit(
        np.repeat(features.to_numpy(), K, axis=0)[keep],
        np.tile(np.arange(K), len(P))[keep],
        sample_weight=P.ravel()[keep],
    )
    np.testing.assert_allclose(
        clf.predict_proba(features),
        direct.predict_proba(features.to_numpy()),
        atol=1e-6,
    )

"""Agreement coefficients against their oracles, closed forms and papers.

Oracles: the ``krippendorff`` package (0.9.0: α from a dense reliability
matrix or value counts), statsmodels' ``fleiss_kappa`` and scikit-learn's
``cohen_kappa_score``, both test-only. They are exercised on the field's
files (LeWiDi 2025, ChaosNLI) and on synthetic tables with missing
annotations; the closed forms and Krippendorff's own worked example need no
oracle.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from sklearn_hcal.datasets import load_chaosnli, load_lewidi
from sklearn_hcal.metrics import (
    annotator_agreement,
    fleiss_kappa,
    item_agreement,
    krippendorff_alpha,
    model_agreement,
    pairwise_cohen_kappa,
)
from tests.conftest import require_data

krippendorff = pytest.importorskip("krippendorff")

TOL = 1e-12


def _reliability(X, values=None):
    """The oracle's input: the dense annotators × items matrix, NaN if absent."""
    wide = X.pivot(index="annotator", columns="item", values="label")
    return wide.to_numpy(dtype=float)


def _lewidi(name):
    return load_lewidi(require_data("lewidi", "2025", f"{name}.json"))


# --------------------------------------------------------------------------- #
# Krippendorff's worked example and closed forms
# --------------------------------------------------------------------------- #
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", §A-E:
# 4 observers, 12 units, missing values (unit 12 has one value: left out).
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _k2011():
    wide = pd.DataFrame(K2011, index=["A", "B", "C", "D"]).rename_axis("annotator")
    long = wide.reset_index().melt(
        id_vars="annotator", var_name="item", value_name="label"
    )
    return long.dropna().astype({"label": int})


@pytest.mark.parametrize(
    "level, published",
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_worked_example(level, published):
    # the paper's values, printed to three decimals
    assert krippendorff_alpha(_k2011(), level=level) == pytest.approx(
        published, abs=5e-4
    )


def test_perfect_agreement_is_one_and_systematic_disagreement_negative():
    assert krippendorff_alpha([[3, 0], [0, 2], [4, 0]]) == 1.0
    assert krippendorff_alpha([[3, 0, 0], [0, 2, 0], [0, 0, 5]], level="ordinal") == 1.0
    # every item split 1-1: α = 1 - (n - 1) * (n/2 * 2/1 ... ): closed form
    # o = [[0, k], [k, 0]] with k items, n = 2k: α = 1 - (2k - 1)·2k / (2·k·k)
    k = 5
    Y = np.tile([1, 1], (k, 1))
    assert krippendorff_alpha(Y) == pytest.approx(1 - (2 * k - 1) / k, abs=TOL)
    assert krippendorff_alpha(Y) < 0


def test_counts_and_long_table_agree():
    X = _k2011()
    counts = pd.crosstab(X["item"], X["label"])
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha(counts, level=level) == pytest.approx(
            krippendorff_alpha(X, level=level), abs=TOL
        )


# --------------------------------------------------------------------------- #
# The oracle on the field's files
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "name, levels",
    [
        ("MP_test", ["nominal"]),
        ("CSC_dev", ["nominal", "ordinal", "interval"]),
        ("Paraphrase_dev", ["nominal", "ordinal", "interval"]),
        ("Paraphrase_train", ["ordinal", "interval"]),
    ],
)
def test_alpha_equals_krippendorff_package_on_lewidi(name, levels):
    data = _lewidi(name)
    X = data.frame[["item", "annotator", "label"]].dropna()
    X = X.astype({"label": float})
    reliability = _reliability(X)
    for level in levels:
        expected = krippendorff.alpha(reliability, level_of_measurement=level)
        assert krippendorff_alpha(X, level=level) == pytest.approx(expected, abs=TOL)
        # the counts table, classes by name (numbers: their own values)
        got = krippendorff_alpha(data.counts, level=level)
        assert got == pytest.approx(expected, abs=TOL)


def test_alpha_equals_krippendorff_package_on_chaosnli():
    data = load_chaosnli("snli", path=require_data("chaosnli_v1.0"))
    expected = krippendorff.alpha(
        value_counts=data.counts, level_of_measurement="nominal"
    )
    counts = pd.DataFrame(data.counts, columns=data.classes)
    assert krippendorff_alpha(counts) == pytest.approx(expected, abs=TOL)
    assert krippendorff_alpha(data.counts) == pytest.approx(expected, abs=TOL)


def _synthetic(seed, n_items=300, n_annotators=12, K=5, missing=0.6):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, K, n_items)
    noise = rng.integers(0, K, (n_annotators, n_items))
    keep = rng.random((n_annotators, n_items)) < 0.7
    labels = np.where(keep, truth, noise).astype(float)
    labels[rng.random(labels.shape) < missing] = np.nan
    wide = pd.DataFrame(labels).rename_axis("annotator")
    long = (
        wide.reset_index()
        .melt(id_vars="annotator", var_name="item", value_name="label")
        .dropna()
    )
    return labels, long


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_equals_krippendorff_package_with_missing_annotations(seed, level):
    # values 1..5 so that the ratio distance has no 0 + 0
    labels, long = _synthetic(seed)
    long = long.assign(label=long["label"] + 1)
    expected = krippendorff.alpha(labels + 1, level_of_measurement=level)
    assert krippendorff_alpha(long, level=level) == pytest.approx(expected, abs=TOL)


def test_unused_class_counts_for_the_ordinal_distance():
    # a class nobody chose still sits between the others on the scale
    labels, long = _synthetic(3, K=4)
    domain = [0.0, 1.0, 2.0, 3.0, 4.0]  # 4 is never chosen
    expected = krippendorff.alpha(
        labels, value_domain=domain, level_of_measurement="ordinal"
    )
    got = krippendorff_alpha(long, level="ordinal", labels=domain)
    assert got == pytest.approx(expected, abs=TOL)


def test_word_classes_follow_the_order_of_labels():
    labels, long = _synthetic(4, K=3)
    words = np.array(["low", "mid", "high"])
    named = long.assign(label=words[long["label"].astype(int)])
    expected = krippendorff.alpha(labels, level_of_measurement="ordinal")
    got = krippendorff_alpha(named, level="ordinal", labels=["low", "mid", "high"])
    assert got == pytest.approx(expected, abs=TOL)


def test_multilabel_gives_one_alpha_per_label():
    data = _lewidi("VariErrNLI_dev")
    X = data.frame[["item", "annotator", "label"]]
    got = krippendorff_alpha(X)
    assert list(got.index) == ["contradiction", "entailment", "neutral"]
    for name in got.index:
        binary = X.assign(label=X["label"].map(lambda s, n=name: float(n in s)))
        expected = krippendorff.alpha(
            _reliability(binary), level_of_measurement="nominal"
        )
        assert got[name] == pytest.approx(expected, abs=TOL)


def test_items_with_one_annotation_are_left_out():
    Y = np.array([[2, 1], [0, 3], [1, 0], [0, 1]])
    assert krippendorff_alpha(Y) == pytest.approx(krippendorff_alpha(Y[:2]), abs=TOL)


# --------------------------------------------------------------------------- #
# Fleiss, Cohen, per item
# --------------------------------------------------------------------------- #
def test_fleiss_kappa_equals_statsmodels():
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    data = load_chaosnli("snli", path=require_data("chaosnli_v1.0"))
    Y = data.counts
    m = Y.sum(axis=1)
    full = Y[m == 100]  # ChaosNLI: 100 labels per item (a few have fewer)
    for method in ("fleiss", "randolph"):
        expected = inter_rater.fleiss_kappa(full, method=method)
        assert fleiss_kappa(full, method=method) == pytest.approx(expected, abs=TOL)
    rng = np.random.default_rng(0)
    small = rng.multinomial(7, [0.5, 0.3, 0.2], size=40)
    assert fleiss_kappa(small) == pytest.approx(
        inter_rater.fleiss_kappa(small), abs=TOL
    )
    # Fleiss (1971) Table 1 / Wikipedia's worked example: κ = 0.210
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_pairwise_cohen_kappa_equals_scikit_learn(weights):
    data = _lewidi("CSC_dev")
    X = data.frame[["item", "annotator", "label"]]
    got = pairwise_cohen_kappa(X, weights=weights)
    common = got.attrs["n_items"]
    classes = sorted(X["label"].unique())
    wide = X.pivot(index="item", columns="annotator", values="label")
    kappa, n_items = got.to_numpy(), common.to_numpy()
    assert np.isnan(kappa[n_items < 2]).all()
    checked = 0
    pairs = np.argwhere(n_items >= 2)
    pairs = pairs[np.random.default_rng(0).permutation(len(pairs))[:100]]
    for i, j in pairs:
        a, b = got.index[i], got.columns[j]
        both = wide[[a, b]].dropna() if a != b else wide[[a]].dropna()
        x = both[a].to_numpy()
        y = both[b].to_numpy() if a != b else x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 0/0 for one-class pairs
            expected = cohen_kappa_score(x, y, labels=classes, weights=weights)
        np.testing.assert_allclose(kappa[i, j], expected, atol=TOL)
        checked += 1
    assert checked == 100


def test_item_agreement_closed_forms():
    table = item_agreement(pd.DataFrame([[4, 0, 0], [2, 1, 1], [1, 0, 0]]), base=2)
    np.testing.assert_allclose(table["observed_agreement"][:2], [1.0, 2 / 12])
    assert np.isnan(table["observed_agreement"][2])
    np.testing.assert_allclose(table["entropy"], [0.0, 1.5, 0.0], atol=TOL)
    # Fleiss' P̄ is the mean of the per-item agreement
    Y = np.random.default_rng(1).multinomial(6, [0.6, 0.3, 0.1], size=50)
    p_bar = item_agreement(Y)["observed_agreement"].mean()
    p = Y.sum(axis=0) / Y.sum()
    chance = (p**2).sum()
    assert fleiss_kappa(Y) == pytest.approx((p_bar - chance) / (1 - chance), abs=TOL)


# --------------------------------------------------------------------------- #
# Per annotator and a model as one more annotator
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_without_each_annotator_equals_the_oracle(level):
    _, long = _synthetic(5, n_items=80, n_annotators=6, K=4, missing=0.4)
    table = annotator_agreement(long, level=level)
    assert table.attrs["alpha"] == pytest.approx(
        krippendorff_alpha(long, level=level), abs=TOL
    )
    for a in table.index:
        rest = long[long["annotator"] != a]
        expected = krippendorff.alpha(_reliability(rest), level_of_measurement=level)
        assert table.loc[a, "alpha_without"] == pytest.approx(expected, abs=TOL)
        mine = long[long["annotator"] == a]
        assert table.loc[a, "n_annotations"] == len(mine)


def test_majority_agreement_against_a_plain_loop():
    _, long = _synthetic(6, n_items=60, n_annotators=5, K=3, missing=0.3)
    table = annotator_agreement(long)
    for a in table.index:
        scores = []
        for _, row in long[long["annotator"] == a].iterrows():
            others = long[(long["item"] == row["item"]) & (long["annotator"] != a)]
            if others.empty:
                continue
            counts = others["label"].value_counts()
            top = counts[counts == counts.max()].index
            scores.append((row["label"] in top) / len(top))
        assert table.loc[a, "majority_agreement"] == pytest.approx(
            np.mean(scores), abs=TOL
        )
        assert table.loc[a, "n_paired"] == len(scores)


def test_model_scored_as_one_more_annotator():
    _, long = _synthetic(7, n_items=50, n_annotators=5, K=3, missing=0.2)
    majority = long.groupby("item")["label"].agg(lambda s: s.value_counts().index[0])
    table = annotator_agreement(long, majority)
    assert table.index[-1] == "model"
    joint = pd.concat(
        [
            long,
            pd.DataFrame(
                {"item": majority.index, "annotator": "model", "label": majority}
            ),
        ],
        ignore_index=True,
    )
    assert table.attrs["alpha_with_model"] == pytest.approx(
        krippendorff.alpha(_reliability(joint), level_of_measurement="nominal"),
        abs=TOL,
    )
    humans = annotator_agreement(long)
    pd.testing.assert_frame_equal(table.iloc[:-1], humans, check_index_type=False)
    summary = model_agreement(long, majority)
    # the majority agrees with the majority of the others more than people do
    assert (
        summary["model_majority_agreement"]
        >= summary["human_majority_agreement_median"]
    )
    assert 0 <= summary["model_percentile"] <= 1


# --------------------------------------------------------------------------- #
# Bootstrap interval
# --------------------------------------------------------------------------- #
def test_bootstrap_interval_is_reproducible_and_equals_a_plain_resampling():
    from sklearn_hcal.metrics._bootstrap import resample_weights

    X = _lewidi("CSC_dev").frame[["item", "annotator", "label"]]
    for level in ("nominal", "ordinal"):
        ci = krippendorff_alpha(X, level=level, n_bootstrap=50, random_state=3)
        again = krippendorff_alpha(X, level=level, n_bootstrap=50, random_state=3)
        assert ci == again
        assert ci.low < ci.alpha < ci.high
        # the same resamples, each α computed from the resampled items
        counts = pd.crosstab(X["item"], X["label"])
        counts = counts[counts.sum(axis=1) >= 2].to_numpy()
        W = resample_weights(3, len(counts), 50)
        replicates = [
            krippendorff.alpha(
                value_counts=np.repeat(counts, w.astype(int), axis=0),
                value_domain=[1, 2, 3, 4, 5, 6],
                level_of_measurement=level,
            )
            for w in W
        ]
        low, high = np.quantile(replicates, [0.025, 0.975])
        assert ci.low == pytest.approx(low, abs=1e-9)
        assert ci.high == pytest.approx(high, abs=1e-9)


def test_multilabel_interval_is_one_row_per_label():
    data = _lewidi("VariErrNLI_dev")
    X = data.frame[["item", "annotator", "label"]]
    point = krippendorff_alpha(X)
    ci = krippendorff_alpha(X, n_bootstrap=50, random_state=0)
    assert list(ci.columns) == ["alpha", "low", "high"]
    np.testing.assert_allclose(ci["alpha"], point, atol=TOL)
    assert (ci["low"] <= ci["high"]).all()


def test_bootstrap_methods_are_the_reports():
    Y = np.random.default_rng(2).multinomial(4, [0.5, 0.3, 0.2], size=120)
    base = krippendorff_alpha(Y, n_bootstrap=200, random_state=1)
    basic = krippendorff_alpha(Y, n_bootstrap=200, random_state=1, ci_method="basic")
    # the same replicates read as the basic interval: 2·α − the other end
    assert basic.low == pytest.approx(2 * base.alpha - base.high, abs=TOL)
    assert basic.high == pytest.approx(2 * base.alpha - base.low, abs=TOL)


def test_item_agreement_keeps_the_items_of_a_long_table():
    X = _k2011()
    table = item_agreement(X)
    assert table.index.tolist() == sorted(X["item"].unique())
    assert table["n_annotations"].sum() == len(X)

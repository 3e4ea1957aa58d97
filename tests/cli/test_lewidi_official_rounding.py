"""``--official-rounding`` gives the LeWiDi 2025 notebook's numbers, metric by metric.

The official evaluation notebook (``Evaluation_LeWiDi_2025_Metrics.ipynb``)
rounds each metric its own way (developer guide §lewidi). Its functions are
written again below from their definitions -- plain Python loops over the
JSON records, POT's ``ot.emd2`` for the Wasserstein distance, the file's
own ``soft_label`` lists as targets -- and compared with ``hcal evaluate
--official-rounding`` on submissions *chosen where the rules differ*: among
seeded random submissions, the first whose score under one uniform rule
(round each item and the mean, the earlier behaviour) is not the notebook's.
Like the notebook, ``--official-rounding`` scores the soft track against the
shipped soft labels (VariErrNLI rounds 1/3 to 0.333).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sklearn_hcal.cli import main

from ..conftest import require_data
from ..metrics import _lewidi_notebook as nb

N_CANDIDATES = 3000  # CSC: about 1 submission in 300 differs


def uniform_rule(per_item):
    """The earlier ``--official-rounding``: each item, then the mean."""
    return round(float(np.mean(np.round(per_item, 5))), 5)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def _records(*parts):
    path = require_data("lewidi", "2025", *parts)
    return path, json.loads(path.read_text(encoding="utf-8"))


def _score(capsys, truth, pred, *extra):
    status = main(
        ["evaluate", str(truth), "--pred", f"m={pred}", "--format", "json", *extra]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)["m"]


def _first(candidates, differs):
    """The first candidate for which ``differs`` holds (there must be one)."""
    for seed, candidate in enumerate(candidates):
        if differs(candidate):
            return seed, candidate
    pytest.fail("no submission where the rules differ among the candidates")


# --------------------------------------------------------------------------- #
# soft track
# --------------------------------------------------------------------------- #
def test_csc_wasserstein_rounds_only_the_mean(tmp_path, capsys):
    pytest.importorskip("ot")
    truth, records = _records("CSC_dev.json")
    ids = list(records)
    targets = np.array([list(records[i]["soft_label"].values()) for i in ids])
    rng = np.random.default_rng(0)

    def candidates():
        for _ in range(N_CANDIDATES):
            yield rng.dirichlet(np.ones(6), size=len(ids))

    def wasserstein(P):  # unit steps: Σ |CDF_t − CDF_p| (closed form)
        return np.abs(np.cumsum(targets - P, axis=1)[:, :-1]).sum(axis=1)

    seed, P = _first(
        candidates(),
        lambda P: uniform_rule(wasserstein(P)) != round(wasserstein(P).mean(), 5),
    )
    pred = tmp_path / "csc.tsv"
    pred.write_text("".join(f"{i}\t{row.tolist()}\n" for i, row in zip(ids, P)))
    got = _score(capsys, truth, pred, "--official-rounding")
    expected = nb.average_ws(targets.tolist(), P.tolist())
    assert got["wasserstein_distance"] == expected, seed
    assert expected != uniform_rule(wasserstein(P))  # the earlier rule's digit
    assert got["manhattan_distance"] == nb.average_md(targets.tolist(), P.tolist())


def test_varierrnli_mamd_rounds_each_label_each_item_and_the_mean(tmp_path, capsys):
    truth, records = _records("VariErrNLI_dev.json")
    ids = list(records)
    labels = ["contradiction", "entailment", "neutral"]
    # the notebook's targets: per item, the [P(0), P(1)] pair of each label
    targets = [
        [[records[i]["soft_label"][lab][k] for k in ("0", "1")] for lab in labels]
        for i in ids
    ]
    T = np.array([[pair[1] for pair in item] for item in targets])
    rng = np.random.default_rng(1)

    def mamd_uniform(Q):
        return uniform_rule((2 * np.abs(T - Q)).mean(axis=1))

    def mamd_notebook(Q):
        return nb.multilabel_average_md(
            targets, [[[1 - q, q] for q in row] for row in Q.tolist()]
        )

    seed, Q = _first(
        (rng.uniform(size=T.shape) for _ in range(N_CANDIDATES)),
        lambda Q: mamd_uniform(Q) != mamd_notebook(Q),
    )
    # the soft submission in the nested layout [[1 - p, p], ...]
    pred = tmp_path / "ven.tsv"
    pred.write_text(
        "".join(
            f"{i}\t{[[1 - q, q] for q in row]}\n" for i, row in zip(ids, Q.tolist())
        )
    )
    got = _score(capsys, truth, pred, "--official-rounding")
    assert got["multilabel_manhattan_distance"] == mamd_notebook(Q), seed


def test_mp_manhattan_and_2023_cross_entropy(tmp_path, capsys):
    truth, records = _records("MP_test.json")
    ids = list(records)
    targets = [list(records[i]["soft_label"].values()) for i in ids]
    P = np.random.default_rng(2).dirichlet([1, 1], size=len(ids))
    pred = tmp_path / "mp.json"
    pred.write_text(json.dumps({i: row for i, row in zip(ids, P.tolist())}))
    got = _score(capsys, truth, pred, "--official-rounding")
    assert got == {"manhattan_distance": nb.average_md(targets, P.tolist())}
    # 2023: the starting kit's cross_entropy rounds nothing
    path = require_data("lewidi", "2023", "HS-Brexit_train.json")
    records = json.loads(path.read_text(encoding="utf-8"))
    ids = list(records)
    soft = np.array([[records[i]["soft_label"][k] for k in ("0", "1")] for i in ids])
    P = np.random.default_rng(3).dirichlet([1, 1], size=len(ids))
    pred = tmp_path / "brexit.json"
    pred.write_text(json.dumps({i: row for i, row in zip(ids, P.tolist())}))
    got = _score(capsys, path, pred, "--official-rounding")
    # its targets are the shipped soft labels (rounded: 1/3 as 0.33)
    ce = -np.sum(soft * np.log(np.clip(P, 1e-12, 1 - 1e-12) + 1e-9)) / len(ids)
    assert got["soft_cross_entropy"] == pytest.approx(ce, abs=1e-12)
    assert got["soft_cross_entropy"] != round(got["soft_cross_entropy"], 5)


# --------------------------------------------------------------------------- #
# perspectivist track
# --------------------------------------------------------------------------- #
def _write_perspectivist(path, records, labels_of):
    rows = {i: dict(zip(nb.annotators(r), labels_of(i))) for i, r in records.items()}
    path.write_text(json.dumps(rows))
    return path


def test_mp_error_rate_rounds_each_item_not_the_mean(tmp_path, capsys):
    truth, records = _records("MP_test.json")
    ids = list(records)
    targets = [
        [int(records[i]["annotations"][a]) for a in nb.annotators(records[i])]
        for i in ids
    ]
    rng = np.random.default_rng(4)

    def candidates():
        for _ in range(20):
            yield [rng.integers(0, 2, len(t)).tolist() for t in targets]

    def per_item(pred):
        return np.array(
            [np.mean(np.abs(np.subtract(t, p))) for t, p in zip(targets, pred)]
        )

    seed, pred = _first(
        candidates(),
        lambda pred: uniform_rule(per_item(pred)) != nb.error_rate(targets, pred),
    )
    by_item = dict(zip(ids, pred))
    path = _write_perspectivist(tmp_path / "mp.json", records, by_item.__getitem__)
    got = _score(capsys, truth, path, "--track", "perspectivist", "--official-rounding")
    # the mean is printed unrounded, as the notebook returns it
    assert got["perspectivist_error_rate"] == pytest.approx(
        nb.error_rate(targets, pred), abs=1e-15
    ), seed
    assert got["perspectivist_error_rate"] != round(got["perspectivist_error_rate"], 5)


def test_varierrnli_error_rate_rounds_each_label_rate(tmp_path, capsys):
    truth, records = _records("VariErrNLI_dev.json")
    ids = list(records)
    labels = ["contradiction", "entailment", "neutral"]

    def vectors(item, chosen):  # the notebook: one 0/1 vector per label
        who = nb.annotators(records[item])
        return [[int(lab in chosen[a]) for a in who] for lab in labels]

    truth_sets = {
        i: {a: set(v.split(",")) for a, v in records[i]["annotations"].items()}
        for i in ids
    }
    targets = [vectors(i, truth_sets[i]) for i in ids]
    rng = np.random.default_rng(5)

    def candidates():
        for _ in range(200):
            yield {
                i: {
                    a: {lab for lab in labels if rng.random() < 0.4} or {"neutral"}
                    for a in nb.annotators(records[i])
                }
                for i in ids
            }

    def uniform(pred):
        per_item = [
            np.mean(np.abs(np.subtract(t, vectors(i, pred[i]))))
            for i, t in zip(ids, targets)
        ]
        return uniform_rule(per_item)

    def notebook(pred):
        return nb.multilabel_error_rate(targets, [vectors(i, pred[i]) for i in ids])

    seed, pred = _first(candidates(), lambda p: uniform(p) != notebook(p))
    path = _write_perspectivist(
        tmp_path / "ven.json",
        records,
        lambda i: [sorted(pred[i][a]) for a in nb.annotators(records[i])],
    )
    got = _score(capsys, truth, path, "--track", "perspectivist", "--official-rounding")
    assert got["perspectivist_error_rate"] == pytest.approx(
        notebook(pred), abs=1e-15
    ), seed


@pytest.mark.parametrize(
    ("name", "scale"), [("Paraphrase_dev.json", 11), ("CSC_dev.json", 6)]
)
def test_absolute_distance_rounds_nothing(tmp_path, capsys, name, scale):
    truth, records = _records(name)
    ids = list(records)
    points = [int(k) for k in records[ids[0]]["soft_label"]]
    targets = [
        [int(records[i]["annotations"][a]) for a in nb.annotators(records[i])]
        for i in ids
    ]
    rng = np.random.default_rng(6)
    pred = [rng.choice(points, len(t)).tolist() for t in targets]
    by_item = dict(zip(ids, pred))
    path = _write_perspectivist(
        tmp_path / "pe.json", records, lambda i: [str(v) for v in by_item[i]]
    )
    got = _score(capsys, truth, path, "--track", "perspectivist", "--official-rounding")
    expected = nb.mean_absolute_distance(targets, pred, scale)
    assert got["perspectivist_absolute_distance"] == pytest.approx(expected, abs=1e-15)
    assert expected != round(expected, 5)
    assert got["perspectivist_error_rate"] == pytest.approx(
        nb.error_rate(
            [[1] * len(t) for t in targets],
            [[int(a == b) for a, b in zip(t, p)] for t, p in zip(targets, pred)],
        ),
        abs=1e-15,
    )

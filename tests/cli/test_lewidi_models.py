"""``hcal lewidi --model transformer|ensemble`` and ``--encoder``: the text
models on the command line, on a tiny local BERT (offline, seconds; the
tests that train it are ``slow``, as every network fit of the suite).

What the command writes must be what the same estimator fitted in Python
writes, byte for byte, and the ensemble's distributions the mean of its two
models' fitted apart.
"""

import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import load_lewidi, write_lewidi_submission
from sklearn_hcal.perspectivist import (
    PerspectivistClassifier,
    PerspectivistEnsemble,
    TransformerPerspectivistClassifier,
    make_default_estimator,
)

from .test_lewidi_submit import _error, _subset

pytest.importorskip("skorch")
pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread: the tiny model's batches only wait for a busy
    second core (the command leaves torch's default; see the user guide)."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _files(tmp_path, train_items=16, test_items=4):
    train = _subset(tmp_path, "Paraphrase_train.json", train_items)
    test = _subset(tmp_path, "Paraphrase_dev.json", test_items)
    return train, test


def _lewidi(capsys, *args):
    code = main(["lewidi", *map(str, args), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _tables(train, test):
    """The command's training table and the table of the file to predict."""
    table = load_lewidi(train).frame
    y = table.pop("label")
    data = load_lewidi(test)
    return table, y, data, data.frame.drop(columns=["label"])


def _transformer(model, classes, **params):
    params = {"random_state": 0, **params}
    return TransformerPerspectivistClassifier(
        str(model),
        text_columns=["Question1", "Question2"],
        classes=classes,
        **params,
    )


def _python_files(folder, data, clf, X):
    return write_lewidi_submission(
        folder, data, soft=clf.predict_soft_labels(X), perspectivist=clf.predict(X)
    )


def _same_files(cli_folder, paths):
    for path in paths.values():
        assert (cli_folder / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.slow
def test_transformer_submission_is_the_python_models(tmp_path, capsys, tiny_model_128):
    train, test = _files(tmp_path)
    out = _lewidi(
        capsys,
        *("--train", train, "--predict", test, "--out", tmp_path / "cli"),
        *("--model", "transformer", "--transformer-model", tiny_model_128),
    )
    # no --folds: a transformer's cross-validation is opt-in, and said so
    assert "no cross-validation by default" in out
    assert "cross-validation on the training files" not in out
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert names == ["Paraphrase_dev_pe.tsv", "Paraphrase_dev_soft.tsv"]
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    clf = _transformer(tiny_model_128, classes).fit(X, y)
    paths = _python_files(tmp_path / "py", data, clf, X_test)
    _same_files(tmp_path / "cli", paths)
    # the official layout: every item once, one label per listed annotator
    lines = (tmp_path / "cli" / "Paraphrase_dev_pe.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        str(i) for i in data.item_info.index
    ]


@pytest.mark.slow
def test_ensemble_is_the_mean_of_the_default_and_two_transformer_seeds(
    tmp_path, capsys, tiny_model_128
):
    train, test = _files(tmp_path)
    _lewidi(
        capsys,
        *("--train", train, "--predict", test, "--out", tmp_path / "cli"),
        *("--model", "ensemble", "--transformer-model", tiny_model_128),
        *("--folds", 0),
    )
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    default = PerspectivistClassifier(classes=classes, random_state=0).fit(X, y)
    # two fine-tuned seeds (--seed and --seed + 1), each fitted on its own
    seeds = [
        _transformer(tiny_model_128, classes, random_state=k).fit(X, y) for k in (0, 1)
    ]
    P = [m.predict_proba(X_test) for m in (default, *seeds)]
    assert not np.allclose(P[1], P[2])  # the seeds are different fits
    mean = (P[0] + P[1] + P[2]) / 3
    ens = PerspectivistEnsemble(
        [
            PerspectivistClassifier(classes=classes, random_state=0),
            _transformer(tiny_model_128, classes),
            _transformer(tiny_model_128, classes, random_state=1),
        ]
    ).fit(X, y)
    np.testing.assert_allclose(ens.predict_proba(X_test), mean, rtol=0, atol=1e-15)
    # Paraphrase's Likert scale: the median of the mean, as the classifier
    cdf = np.cumsum(mean, axis=1)
    median = np.asarray(classes)[np.argmax(cdf >= 0.5 - 1e-12, axis=1)]
    np.testing.assert_array_equal(ens.predict(X_test), median)
    soft = pd.DataFrame(mean, columns=classes).groupby(X_test["item"].to_numpy()).mean()
    got = ens.predict_soft_labels(X_test)
    np.testing.assert_allclose(got.loc[soft.index].to_numpy(), soft.to_numpy())
    _same_files(tmp_path / "cli", _python_files(tmp_path / "py", data, ens, X_test))


@pytest.mark.slow
def test_transformer_seeds_sets_how_many_fits_are_averaged(
    tmp_path, capsys, tiny_model_128
):
    train, test = _files(tmp_path, 12, 3)
    args = ("--train", train, "--predict", test, "--transformer-model", tiny_model_128)
    _lewidi(
        capsys,
        *args,
        *("--out", tmp_path / "one", "--model", "ensemble", "--folds", 0),
        *("--transformer-seeds", 1),
    )
    _lewidi(
        capsys,
        *args,
        *("--out", tmp_path / "two", "--model", "transformer"),
        *("--transformer-seeds", 2, "--seed", 3),
    )
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    one = PerspectivistEnsemble(
        [
            PerspectivistClassifier(classes=classes, random_state=0),
            _transformer(tiny_model_128, classes),
        ]
    ).fit(X, y)
    _same_files(tmp_path / "one", _python_files(tmp_path / "py1", data, one, X_test))
    two = PerspectivistEnsemble(
        [_transformer(tiny_model_128, classes, random_state=k) for k in (3, 4)]
    ).fit(X, y)
    _same_files(tmp_path / "two", _python_files(tmp_path / "py2", data, two, X_test))


@pytest.mark.slow
def test_no_explanations_reach_the_transformer(tmp_path, capsys, tiny_model_128):
    train, test = _files(tmp_path, 12, 3)
    _lewidi(
        capsys,
        *("--train", train, "--predict", test, "--out", tmp_path / "cli"),
        *("--model", "transformer", "--transformer-model", tiny_model_128),
        "--no-explanations",
    )
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    clf = _transformer(tiny_model_128, classes, explanation=None).fit(X, y)
    assert clf.explanation_ is None
    _same_files(tmp_path / "cli", _python_files(tmp_path / "py", data, clf, X_test))


@pytest.mark.slow
def test_transformer_cross_validation_when_asked(tmp_path, capsys, tiny_model_128):
    train, test = _files(tmp_path, 12, 3)
    out = _lewidi(
        capsys,
        *("--train", train, "--predict", test, "--out", tmp_path / "cli"),
        *("--model", "transformer", "--transformer-model", tiny_model_128),
        *("--folds", 2, "--no-explanations"),
    )
    assert "no cross-validation by default" not in out
    assert "Item-grouped 2-fold cross-validation" in out
    assert "--model transformer" in out


def _encoded_default(model, classes):
    """The default model with ``encoder=model``, as a Python user builds it."""
    est = make_default_estimator(
        ordinal=True,
        multilabel=False,
        n_classes=len(classes),
        random_state=0,
        encoder=str(model),
    )
    est.set_params(annotationvectorizer__text_columns=["Question1", "Question2"])
    return PerspectivistClassifier(est, classes=classes, random_state=0)


def test_encoder_submission_is_the_python_model(tmp_path, capsys, tiny_model_wide):
    train, test = _files(tmp_path, 20, 4)
    for folder, extra in (("cli", ("--encoder", tiny_model_wide)), ("plain", ())):
        _lewidi(
            capsys,
            *("--train", train, "--predict", test, "--out", tmp_path / folder),
            *("--folds", 0, *extra),
        )
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    clf = _encoded_default(tiny_model_wide, classes).fit(X, y)
    # [u, v, |u - v|, u * v] and the explanation's vector, 24 numbers each,
    # and the cosine of u and v
    assert clf.estimator_[0].n_encoded_features_ == 5 * 24 + 1
    _same_files(tmp_path / "cli", _python_files(tmp_path / "py", data, clf, X_test))
    # the encoder changed what was predicted: the soft labels differ
    soft = "Paraphrase_dev_soft.tsv"
    assert (tmp_path / "cli" / soft).read_bytes() != (
        tmp_path / "plain" / soft
    ).read_bytes()


@pytest.mark.slow
def test_encoder_reaches_the_ensembles_default_member(
    tmp_path, capsys, tiny_model_128, tiny_model_wide
):
    train, test = _files(tmp_path, 12, 3)
    _lewidi(
        capsys,
        *("--train", train, "--predict", test, "--out", tmp_path / "cli"),
        *("--model", "ensemble", "--transformer-model", tiny_model_128),
        *("--folds", 0, "--encoder", tiny_model_wide, "--transformer-seeds", 1),
    )
    X, y, data, X_test = _tables(train, test)
    classes = list(load_lewidi(train).classes)
    ens = PerspectivistEnsemble(
        [
            _encoded_default(tiny_model_wide, classes),
            _transformer(tiny_model_128, classes),
        ]
    ).fit(X, y)
    _same_files(tmp_path / "cli", _python_files(tmp_path / "py", data, ens, X_test))


def _args(tmp_path):
    train, test = _files(tmp_path, 4, 2)
    return ["--train", train, "--predict", test, "--out", tmp_path / "o"]


@pytest.mark.parametrize(
    "option", ["--transformer-model", "--device", "--transformer-seeds"]
)
def test_transformer_options_need_a_transformer(tmp_path, capsys, option):
    value = {"--device": "cpu", "--transformer-seeds": 2}.get(option, tmp_path)
    err = _error(capsys, *_args(tmp_path), option, value)
    assert f"{option} applies to --model transformer or ensemble" in err


def test_a_model_folder_that_is_not_one(tmp_path, capsys):
    err = _error(
        capsys,
        *_args(tmp_path),
        *("--model", "transformer", "--transformer-model", tmp_path / "nowhere"),
    )
    assert err.startswith("hcal: error: --transformer-model:")
    assert "not a local model folder" in err


@pytest.mark.parametrize("module", ["torch", "skorch", "transformers"])
def test_a_missing_extra_is_named(tmp_path, capsys, monkeypatch, tiny_model, module):
    # None in sys.modules makes ``import module`` fail as if not installed
    monkeypatch.setitem(sys.modules, module, None)
    err = _error(
        capsys,
        *_args(tmp_path),
        *("--model", "ensemble", "--transformer-model", tiny_model),
    )
    assert err.count("\n") == 1
    assert f"needs {module}, which is not installed" in err
    assert 'pip install "sklearn-hcal[torch,nlp]"' in err


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(
    _cuda_available(),
    reason="the refusal of --device cuda needs a machine without"
    " a GPU; with one, the transformer tests run on it instead",
)
def test_cuda_without_a_gpu_is_refused_before_reading(tmp_path, capsys, tiny_model):
    pytest.importorskip("torch")
    err = _error(
        capsys,
        *_args(tmp_path),
        *("--model", "transformer", "--transformer-model", tiny_model),
        *("--device", "cuda"),
    )
    assert err.startswith("hcal: error: --device cuda:")
    assert "CUDA is not available" in err


def test_encoder_needs_a_default_model(tmp_path, capsys, tiny_model_wide):
    err = _error(
        capsys,
        *_args(tmp_path),
        *("--model", "transformer", "--encoder", tiny_model_wide),
    )
    assert "--encoder applies to --model default or ensemble" in err


@pytest.mark.parametrize("value", ["minlm", "nowhere"])
def test_an_unknown_encoder_is_refused_before_reading(tmp_path, capsys, value):
    err = _error(capsys, *_args(tmp_path), "--encoder", value)
    assert err.startswith(f"hcal: error: --encoder {value}: encoder='{value}'")
    assert "is neither 'minilm'" in err


@pytest.mark.parametrize("module", ["torch", "sentence_transformers"])
def test_a_missing_encoder_extra_is_named(tmp_path, capsys, monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)
    err = _error(capsys, *_args(tmp_path), "--encoder")
    assert err.count("\n") == 1
    assert f"--encoder needs {module}, which is not installed" in err
    assert 'pip install "sklearn-hcal[torch,nlp]"' in err

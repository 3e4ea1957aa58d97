"""``hcal lewidi``: submission files that ``hcal evaluate`` scores as Python does.

Small copies of the official files (the first items of each split, with the
annotator metadata beside them) keep the runs to seconds. The scores
``hcal evaluate`` reads from the written files must equal the official
metric functions applied in Python to a model fitted on the same table with
the same seed.
"""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import (
    manhattan_distance,
    multilabel_manhattan_distance,
    perspectivist_absolute_distance,
    perspectivist_error_rate,
    wasserstein_distance,
)
from sklearn_hcal.perspectivist import PerspectivistClassifier

from ..conftest import require_data


def _subset(tmp_path, name, n_items, *, start=0, rename=None):
    """The first ``n_items`` of an official file, its metadata beside it."""
    src = require_data("lewidi", "2025", name)
    with open(src, encoding="utf-8") as f:
        data = json.load(f)
    keep = dict(list(data.items())[start : start + n_items])
    dest = tmp_path / (rename or name)
    dest.write_text(json.dumps(keep), encoding="utf-8")
    meta = src.with_name(src.stem.rsplit("_", 1)[0] + "_annotators_meta.json")
    target = dest.with_name(dest.stem.rsplit("_", 1)[0] + "_annotators_meta.json")
    if meta.is_file() and not target.exists():
        shutil.copy(meta, target)
    return dest


def _run(capsys, *args):
    code = main(["lewidi", *map(str, args), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def _submit(capsys, train, test, out):
    """``hcal lewidi`` on one training file, without cross-validation."""
    return _run(capsys, "--train", train, "--predict", test, "--out", out, "--folds", 0)


def _evaluate(capsys, truth, pred, track):
    code = main(
        ["evaluate", str(truth), "--pred", f"m={pred}", "--track", track]
        + ["--format", "json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["m"]


def _error(capsys, *args):
    code = main(["lewidi", *map(str, args), "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2
    return err


def _python_model(train_files, test_file, seed=0):
    """The model the command fits, fitted here; the test file's table."""
    frames = [load_lewidi(p).frame for p in train_files]
    table = pd.concat(frames, ignore_index=True)
    y = table.pop("label")
    data = load_lewidi(train_files[0])
    classes = None if data.multilabel else list(data.classes)
    clf = PerspectivistClassifier(classes=classes, random_state=seed).fit(table, y)
    test = load_lewidi(test_file)
    return clf, test, test.frame.drop(columns=["label"])


def test_paraphrase_submission_round_trips_through_evaluate(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 80)
    test = _subset(tmp_path, "Paraphrase_dev.json", 20)
    _submit(capsys, train, test, tmp_path / "out")
    soft_file = tmp_path / "out" / "Paraphrase_dev_soft.tsv"
    pe_file = tmp_path / "out" / "Paraphrase_dev_pe.tsv"
    clf, data, X = _python_model([train], test)
    soft = clf.predict_soft_labels(X)
    pred = data.annotations.assign(label=clf.predict(X))
    got = _evaluate(capsys, test, soft_file, "soft")
    assert got["manhattan_distance"] == pytest.approx(
        manhattan_distance(data.counts, soft), abs=1e-12
    )
    assert got["wasserstein_distance"] == pytest.approx(
        wasserstein_distance(data.counts, soft), abs=1e-12
    )
    got = _evaluate(capsys, test, pe_file, "perspectivist")
    assert got["perspectivist_absolute_distance"] == pytest.approx(
        perspectivist_absolute_distance(data.annotations, pred, order=data.classes),
        abs=1e-12,
    )
    assert got["perspectivist_error_rate"] == pytest.approx(
        perspectivist_error_rate(data.annotations, pred), abs=1e-12
    )
    # the layout: one line per item, the annotators' labels in field order
    first = pe_file.read_text().splitlines()[0].split("\t")
    item = data.item_info.index[0]
    assert first[0] == item
    assert json.loads(first[1]) == [int(v) for v in clf.predict(X)[:4]]


def test_varierrnli_lists_each_annotators_labels_once(tmp_path, capsys):
    train = _subset(tmp_path, "VariErrNLI_train.json", 80)
    # items 50.. of train as the file to predict: several repeat an annotator
    test = _subset(
        tmp_path, "VariErrNLI_train.json", 30, start=100, rename="VariErrNLI_dev.json"
    )
    _submit(capsys, train, test, tmp_path / "out")
    clf, data, X = _python_model([train], test)
    labels = list(data.classes)
    soft = clf.predict_soft_labels(X)[labels]
    n = data.item_info["n_annotators"].to_numpy()
    truth = data.counts.to_numpy() / n[:, None]
    got = _evaluate(capsys, test, tmp_path / "out" / "VariErrNLI_dev_soft.tsv", "soft")
    assert got["multilabel_manhattan_distance"] == pytest.approx(
        multilabel_manhattan_distance(truth, soft.to_numpy()), abs=1e-12
    )
    pe_file = tmp_path / "out" / "VariErrNLI_dev_pe.tsv"
    sets = clf.predict(X)
    pred = data.annotations[["item", "annotator"]].copy()
    for lab in labels:
        pred[lab] = [int(lab in s) for s in sets]
    got = _evaluate(capsys, test, pe_file, "perspectivist")
    assert got["perspectivist_error_rate"] == pytest.approx(
        perspectivist_error_rate(data.annotations, pred, label=labels), abs=1e-12
    )
    # one entry per distinct annotator, in the order of the annotators field
    with open(test, encoding="utf-8") as f:
        records = json.load(f)
    for line in pe_file.read_text().splitlines():
        item, value = line.split("\t")
        listed = records[item]["annotators"].split(",")
        assert len(json.loads(value)) == len(dict.fromkeys(listed))


def test_cross_validation_is_printed_with_the_baselines(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 60)
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    out, _ = _run(
        capsys,
        "--train",
        train,
        "--predict",
        test,
        "--out",
        tmp_path / "out",
        "--folds",
        3,
    )
    assert "Item-grouped 3-fold cross-validation" in out
    # every baseline and metric named in the legend, with its direction
    for line in (
        "A: most frequent label (baseline)",
        "B: annotator's most frequent label (baseline)",
        "C: prior (baseline)",
        "every metric: lower is better",
        "pe-distance: perspectivist absolute distance",
    ):
        assert line in out
    assert "Opt-ICL 0.119" in out and "twinhter 0.080" in out
    # both settings, each named, beside the published results
    flat = " ".join(out.split())
    assert "The same model without the explanations (--no-explanations):" in out
    assert "with the explanations of the rows predicted" in flat
    assert "without them. On the official test set" in flat
    assert max(len(line) for line in out.splitlines()) <= 80


def test_progress_goes_to_stderr(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    code = main(
        [
            "lewidi",
            "--train",
            str(train),
            "--predict",
            str(test),
            "--out",
            str(tmp_path / "o"),
            "--folds",
            "0",
        ]
    )
    out, err = capsys.readouterr()
    # stdout holds results only: what the model reads, no progress
    assert code == 0 and out.startswith("Reads from Paraphrase_dev.json:")
    assert "fitting the model" not in out and "[" not in out.split(":")[0]
    assert "fitting the model" in err and "wrote" in err


# -- errors name the file, the item and the annotator -----------------------


def test_an_item_without_annotators_in_the_file_to_predict(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    records = json.loads(test.read_text())
    item = list(records)[2]
    records[item]["annotators"] = ""
    del records[item]["annotations"]
    test.write_text(json.dumps(records))
    err = _error(capsys, "--train", train, "--predict", test, "--out", tmp_path)
    assert f"item {item!r} has no annotators" in err


def test_a_training_item_without_annotations(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    records = json.loads(train.read_text())
    item = list(records)[4]
    del records[item]["annotations"]
    train.write_text(json.dumps(records))
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    err = _error(capsys, "--train", train, "--predict", test, "--out", tmp_path)
    assert f"item {item!r} has no annotations" in err


def test_a_label_outside_the_scale(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    records = json.loads(train.read_text())
    item = list(records)[3]
    records[item]["annotations"]["Ann2"] = "7"
    train.write_text(json.dumps(records))
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    err = _error(capsys, "--train", train, "--predict", test, "--out", tmp_path)
    assert f"item {item!r}, annotator 'Ann2': the label 7 is outside the scale" in err


def test_a_label_outside_the_scale_of_a_second_training_file(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    second = _subset(
        tmp_path, "Paraphrase_train.json", 20, start=40, rename="Paraphrase_more.json"
    )
    records = json.loads(second.read_text())
    item = list(records)[3]
    records[item]["annotations"]["Ann2"] = "7"
    records[item]["soft_label"]["7"] = 0.0
    second.write_text(json.dumps(records))
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    err = _error(
        capsys,
        "--train",
        train,
        "--train",
        second,
        "--predict",
        test,
        "--out",
        tmp_path,
    )
    assert "Paraphrase_more.json is not of the data set" in err


def test_a_file_to_predict_of_another_data_set(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    test = _subset(tmp_path, "CSC_dev.json", 5)
    err = _error(capsys, "--train", train, "--predict", test, "--out", tmp_path)
    assert "--predict" in err and "is not of the data set" in err
    assert "paraphrase detection" in err and "sarcasm detection" in err


def test_the_file_to_predict_may_not_be_a_training_file(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    err = _error(capsys, "--train", train, "--predict", train, "--out", tmp_path)
    assert "is the training file" in err
    copy = tmp_path / "copy.json"
    shutil.copy(train, copy)
    err = _error(capsys, "--train", train, "--predict", copy, "--out", tmp_path)
    assert "is the training file" in err


def test_unseen_annotators_and_missing_explanations_do_not_stop_a_submission(
    tmp_path, capsys
):
    train = _subset(tmp_path, "Paraphrase_train.json", 40)
    test = _subset(tmp_path, "Paraphrase_dev.json", 6)
    records = json.loads(test.read_text())
    for record in records.values():
        record["other_info"] = {}
        record["annotators"] = record["annotators"].replace("Ann4", "Ann9")
        record["annotations"] = {
            ("Ann9" if k == "Ann4" else k): v for k, v in record["annotations"].items()
        }
    test.write_text(json.dumps(records))
    code = main(
        [
            "lewidi",
            "--train",
            str(train),
            "--predict",
            str(test),
            "--out",
            str(tmp_path / "out"),
            "--folds",
            "0",
            "--quiet",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "hcal: warning:" in err and "not seen in fit" in err
    lines = (tmp_path / "out" / "Paraphrase_dev_pe.tsv").read_text().splitlines()
    assert len(lines) == 6
    assert np.all([len(json.loads(line.split("\t")[1])) == 4 for line in lines])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Paraphrase", "VariErrNLI"])
def test_the_full_files_round_trip(tmp_path, capsys, name):
    train = require_data("lewidi", "2025", f"{name}_train.json")
    test = require_data("lewidi", "2025", f"{name}_dev.json")
    _run(capsys, "--train", train, "--predict", test, "--out", tmp_path, "--folds", 0)
    clf, data, X = _python_model([train], test)
    track = "perspectivist"
    got = _evaluate(capsys, test, tmp_path / f"{name}_dev_pe.tsv", track)
    if data.multilabel:
        labels = list(data.classes)
        pred = data.annotations[["item", "annotator"]].copy()
        for lab in labels:
            pred[lab] = [int(lab in s) for s in clf.predict(X)]
        expected = perspectivist_error_rate(data.annotations, pred, label=labels)
        assert got["perspectivist_error_rate"] == pytest.approx(expected, abs=1e-12)
    else:
        pred = data.annotations.assign(label=clf.predict(X))
        expected = perspectivist_absolute_distance(
            data.annotations, pred, order=data.classes
        )
        assert got["perspectivist_absolute_distance"] == pytest.approx(
            expected, abs=1e-12
        )
        got = _evaluate(capsys, test, tmp_path / f"{name}_dev_soft.tsv", "soft")
        soft = clf.predict_soft_labels(X)
        assert got["wasserstein_distance"] == pytest.approx(
            wasserstein_distance(data.counts, soft), abs=1e-12
        )


# -- one room: the command writes what Python writes ------------------------


def test_the_command_writes_the_files_python_writes_byte_for_byte(tmp_path, capsys):
    from sklearn_hcal.datasets import write_lewidi_submission

    for name, n in (("Paraphrase", 60), ("VariErrNLI", 60)):
        train = _subset(tmp_path, f"{name}_train.json", n)
        test = _subset(tmp_path, f"{name}_dev.json", 12)
        _submit(capsys, train, test, tmp_path / "cli")
        clf, data, X = _python_model([train], test)
        paths = write_lewidi_submission(
            tmp_path,
            data,
            soft=clf.predict_soft_labels(X),
            perspectivist=clf.predict(X),
        )
        for path in paths.values():
            assert (tmp_path / "cli" / path.name).read_bytes() == path.read_bytes()


def _with_explanations(path, text):
    records = json.loads(path.read_text())
    for record in records.values():
        info = record.get("other_info") or {}
        if "explanations" in info:
            info["explanations"] = [text for _ in info["explanations"]]
    path.write_text(json.dumps(records))


def test_no_explanations_reads_none_of_them(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 60)
    test = _subset(tmp_path, "Paraphrase_dev.json", 10)
    outputs = {}
    for text in ("same question, said otherwise", "different topics entirely"):
        _with_explanations(test, text)
        for flag in ([], ["--no-explanations"]):
            out = tmp_path / f"{text[:4]}{len(flag)}"
            _run(
                capsys,
                *(["--train", train, "--predict", test, "--out", out]),
                "--folds",
                0,
                *flag,
            )
            outputs[text, bool(flag)] = [
                (out / f).read_bytes()
                for f in ("Paraphrase_dev_soft.tsv", "Paraphrase_dev_pe.tsv")
            ]
    # the explanations move the predictions of a model that reads them ...
    assert (
        outputs["same question, said otherwise", False]
        != outputs["different topics entirely", False]
    )
    # ... and not one byte of a model that does not
    assert (
        outputs["same question, said otherwise", True]
        == outputs["different topics entirely", True]
    )


def test_the_command_says_which_test_columns_it_reads(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    test = _subset(tmp_path, "Paraphrase_dev.json", 5)
    out, _ = _submit(capsys, train, test, tmp_path / "o")
    assert "Reads from Paraphrase_dev.json" in out
    assert "explanations of 20 of its 20" in " ".join(out.split())
    flags = ["--out", tmp_path, "--folds", 0, "--no-explanations"]
    out, _ = _run(capsys, "--train", train, "--predict", test, *flags)
    assert "explanations are not read" in " ".join(out.split())


def test_one_fold_is_refused(tmp_path, capsys):
    code = main(
        ["lewidi", "--train", "a.json", "--predict", "b.json", "--out"]
        + [str(tmp_path), "--folds", "1"]
    )
    assert code == 2
    assert "at least 2" in capsys.readouterr().err


def test_each_warning_of_the_folds_is_shown_once(tmp_path, capsys):
    train = _subset(tmp_path, "Paraphrase_train.json", 30)
    records = json.loads(train.read_text())
    for k, record in enumerate(records.values()):
        if k % 2:  # half the items ship no explanations: every fold warns
            record["other_info"] = {}
    train.write_text(json.dumps(records))
    test = _subset(tmp_path, "Paraphrase_dev.json", 4)
    code = main(
        ["lewidi", "--train", str(train), "--predict", str(test), "--out"]
        + [str(tmp_path / "o"), "--folds", "3"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    lacking = [line for line in err.splitlines() if "lack ['explanation']" in line]
    assert len(lacking) == 1, err
    assert "3 times over the folds" in lacking[0]
    # progress: every fold, numbered
    for k in (1, 2, 3):
        assert f"cross-validation: fold {k}/3 done" in err
        assert f"cross-validation without the explanations: fold {k}/3 done" in err

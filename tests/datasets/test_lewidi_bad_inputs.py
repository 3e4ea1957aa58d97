"""Bad LeWiDi inputs: refused with a message naming the item and the value.

Small files written here in the published layouts. Each case failed before
(kept silently, a wrong message, or a message without the item or value).
Also the rounding cases of the published files: soft labels rounded to 2
decimals (CSC's test split: sums 0.99 and 1.01) and metadata with trailing
commas (Paraphrase, VariErrNLI).
"""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import fetch_lewidi, load_lewidi
from sklearn_hcal.metrics import perspectivist_error_rate, wasserstein_distance


def _write(path, obj):
    path.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    return path


def _item(annotations, soft_label, annotators=None):
    who = annotators or ",".join(annotations) if isinstance(annotations, dict) else ""
    return {
        "annotation task": "sarcasm detection",
        "text": {"context": "c", "response": "r"},
        "annotators": annotators or who,
        "annotations": annotations,
        "soft_label": soft_label,
        "split": "test",
        "lang": "en",
        "other_info": {},
    }


def _csc(**items):
    return {k: v for k, v in items.items()}


SOFT_OK = {"1": 0.5, "2": 0.5, "3": 0.0}
SOFT_ONE = {"1": 1.0, "2": 0.0, "3": 0.0}


# --------------------------------------------------------------------------- #
# Soft labels that are not distributions
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("soft", "needle"),
    [
        ({"1": -0.25, "2": 1.25, "3": 0.0}, "-0.25"),  # negative, sums to 1
        ({"1": 0.5, "2": 0.5, "3": 0.5}, "sums to 1.5"),
        ({"1": float("nan"), "2": 0.5, "3": 0.5}, "nan"),
    ],
    ids=["negative", "sum_1.5", "nan"],
)
def test_soft_label_that_is_not_a_distribution_is_refused(tmp_path, soft, needle):
    path = _write(
        tmp_path / "CSC_test.json",
        {
            "a1": _item({"Ann1": "1", "Ann2": "2"}, SOFT_OK),
            "a2": _item({"Ann1": "1", "Ann2": "2"}, soft),
        },
    )
    with pytest.raises(ValueError, match="'a2'") as info:
        load_lewidi(path, annotators_meta=None)
    assert needle in str(info.value)


def test_multilabel_soft_label_keyed_no_yes_is_refused(tmp_path):
    record = _item(
        {"Ann1": "entailment", "Ann2": "neutral"},
        {
            "entailment": {"no": 0.5, "yes": 0.5},
            "neutral": {"no": 0.5, "yes": 0.5},
        },
    )
    path = _write(tmp_path / "VariErrNLI_dev.json", {"7": record})
    with pytest.raises(ValueError, match=r"'7'.*'no'"):
        load_lewidi(path, annotators_meta=None)


# --------------------------------------------------------------------------- #
# Messages that name the file's item and value
# --------------------------------------------------------------------------- #
def test_annotator_metadata_holding_a_list_is_named_as_metadata(tmp_path):
    path = _write(tmp_path / "CSC_dev.json", {"a": _item({"Ann1": "1"}, SOFT_ONE)})
    _write(tmp_path / "CSC_annotators_meta.json", [{"Ann1": {"Gender": "F"}}])
    with pytest.raises(ValueError, match="annotator-metadata file") as info:
        load_lewidi(path)
    assert "harmonised" not in str(info.value)
    assert "list" in str(info.value)


def test_fetch_an_unpublished_split_blames_the_split_not_the_network(tmp_path):
    with pytest.raises(ValueError, match="split='validation'.*'dev'"):
        fetch_lewidi("par", "validation", data_home=tmp_path, download_if_missing=False)


def test_repeated_annotator_names_item_and_annotator(tmp_path):
    record = {
        "annotators": "Ann1,Ann2,Ann1",
        "annotations": "1,0,1",
        "soft_label": {"0": 0.333, "1": 0.667},
        "text": "t",
    }
    path = _write(tmp_path / "HS-Brexit_train.json", {"17": record})
    with pytest.raises(ValueError, match=r"'17'.*'Ann1'.*twice"):
        load_lewidi(path)


def test_file_mixing_formats_names_an_item_of_each(tmp_path):
    path = _write(
        tmp_path / "mixed.json",
        {
            "x1": {"annotators": "Ann1,Ann2", "annotations": "1,0", "text": "t"},
            "x2": {"annotators": "Ann1", "annotations": {"Ann1": "1"}, "text": "t"},
        },
    )
    with pytest.raises(ValueError, match=r"'x1'.*2023.*'x2'.*2025"):
        load_lewidi(path)


def test_non_utf8_byte_is_named_with_its_position(tmp_path):
    path = tmp_path / "CSC_dev.json"
    path.write_bytes(b'{"a": {"text": "caf\xe9"}}')
    with pytest.raises(ValueError, match=r"0xe9 at offset 19, line 1"):
        load_lewidi(path)


def test_non_object_record_names_the_item_and_value(tmp_path):
    path = _write(
        tmp_path / "CSC_dev.json",
        {"a": _item({"Ann1": "1"}, SOFT_ONE), "b": ["Ann1", "1"]},
    )
    with pytest.raises(ValueError, match=r"item 'b' is \['Ann1', '1'\].*list"):
        load_lewidi(path)


def test_annotation_indicator_of_2_names_the_pair_and_value():
    ann = pd.DataFrame(
        {"item": [1, 1], "annotator": ["A", "B"], "e": [1, 0], "n": [0, 1]}
    )
    pred = ann.assign(n=[0, 2])
    with pytest.raises(ValueError, match=r"item 1, annotator 'B', label 'n' is 2"):
        perspectivist_error_rate(ann, pred, label=["e", "n"])


def test_cli_numeric_columns_out_of_order_follow_the_library_rule(tmp_path, capsys):
    # columns 3,1,2,4: the function refuses them as an ambiguous scale, and
    # so must the command line (it scored them in file order)
    (tmp_path / "Y.csv").write_text("id,3,1,2,4\na,1,2,0,1\nb,0,1,3,0\n")
    (tmp_path / "P.csv").write_text("id,3,1,2,4\na,.1,.2,.3,.4\nb,.4,.3,.2,.1\n")
    Y = pd.read_csv(tmp_path / "Y.csv", index_col=0)
    P = pd.read_csv(tmp_path / "P.csv", index_col=0)
    with pytest.raises(ValueError, match="ambiguous"):
        wasserstein_distance(Y, P)
    argv = ["evaluate", str(tmp_path / "Y.csv"), "--pred", str(tmp_path / "P.csv")]
    status = main([*argv, "--metrics", "wasserstein,rps"])
    err = capsys.readouterr().err
    assert status == 2 and "ambiguous" in err and "--order" in err
    # --order gives the scale: the library's value with order=
    status = main([*argv, "--metrics", "wasserstein", "--order", "1,2,3,4"])
    out = capsys.readouterr().out
    assert status == 0
    expected = wasserstein_distance(Y, P, order=["1", "2", "3", "4"])
    assert f"{expected:.4f}" in out


# --------------------------------------------------------------------------- #
# The published rounding: CSC's 2-decimal soft labels, trailing commas
# --------------------------------------------------------------------------- #
def _csc_rounded(tmp_path, with_annotations=True):
    # Like CSC's test split: 3 annotators, soft labels rounded to 2 decimals
    # (1/3 -> 0.33: the row sums to 0.99; 2/3 -> 0.67 with 1/3 -> 0.34: 1.01)
    ann = [
        {"Ann1": "1", "Ann2": "2", "Ann3": "3"},
        {"Ann1": "2", "Ann2": "2", "Ann3": "5"},
        {"Ann1": "6", "Ann2": "6", "Ann3": "6"},
    ]
    soft = [
        {"1": 0.33, "2": 0.33, "3": 0.33, "4": 0.0, "5": 0.0, "6": 0.0},
        {"1": 0.0, "2": 0.67, "3": 0.0, "4": 0.0, "5": 0.34, "6": 0.0},
        {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.0, "6": 1.0},
    ]
    items = {}
    for i, (a, s) in enumerate(zip(ann, soft)):
        record = _item(a if with_annotations else "", s, annotators="Ann1,Ann2,Ann3")
        items[f"c{i}"] = record
    return _write(tmp_path / "CSC_test.json", items)


def test_csc_rounding_counts_are_the_truth_soft_labels_kept_beside(tmp_path):
    path = _csc_rounded(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_lewidi(path)
    assert data.counts.to_numpy().tolist() == [
        [1, 1, 1, 0, 0, 0],
        [0, 2, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 3],
    ]
    assert data.soft_labels.sum(axis=1).round(2).tolist() == [0.99, 1.01, 1.0]
    np.testing.assert_allclose(
        data.item_info["soft_label_gap"], [1 / 3 - 0.33, 0.34 - 1 / 3, 0.0]
    )
    # the metrics take the counts the loader returned
    assert np.isfinite(wasserstein_distance(data.counts, np.full((3, 6), 1 / 6)))


def test_csc_rounding_soft_only_items_are_renormalised_with_a_warning(tmp_path):
    path = _csc_rounded(tmp_path, with_annotations=False)
    with pytest.warns(UserWarning, match=r"item 'c0' sums to 0\.99"):
        data = load_lewidi(path)
    assert data.counts is None
    np.testing.assert_allclose(data.soft_labels.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(data.soft_labels.iloc[0, :3], 1 / 3)
    assert wasserstein_distance(data.soft_labels, np.full((3, 6), 1 / 6)) >= 0


def test_metadata_with_trailing_commas_is_read(tmp_path):
    path = _write(tmp_path / "Par_dev.json", {"a": _item({"Ann1": "1"}, SOFT_ONE)})
    (tmp_path / "Par_annotators_meta.json").write_text(
        '{\n "Ann1": {"Gender": "Male", "Note": "a,}",},\n}\n', encoding="utf-8"
    )
    data = load_lewidi(path)
    assert data.annotators.loc["Ann1", "Note"] == "a,}"  # commas in strings kept
    # anything else outside strict JSON is still refused
    (tmp_path / "Par_annotators_meta.json").write_text("{'Ann1': {}}")
    with pytest.raises(ValueError, match=re.escape("not valid JSON")):
        load_lewidi(path)


# --------------------------------------------------------------------------- #
# Submission files written from Python, splits combined, files loaded
# --------------------------------------------------------------------------- #
def _toy(tmp_path):
    """A 2-item LeWiDi file (classes 1..3, annotators A and B) and its soft
    label and per-annotator predictions, both valid."""
    path = _write(
        tmp_path / "CSC_test.json",
        _csc(
            **{
                "10": _item({"A": "1", "B": "2"}, SOFT_OK),
                "11": _item({"A": "3", "B": "3"}, {"1": 0.0, "2": 0.0, "3": 1.0}),
            }
        ),
    )
    test = load_lewidi(path, annotators_meta=None)
    soft = pd.DataFrame(
        [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], index=["10", "11"], columns=["1", "2", "3"]
    )
    pe = pd.DataFrame(
        {
            "item": ["10", "10", "11", "11"],
            "annotator": list("ABAB"),
            "label": [1, 2, 3, 3],
        }
    )
    return test, soft, pe


def _with(frame, row, col, value):
    frame = frame.astype(object).copy()
    frame.iloc[row, col] = value
    return frame


# Each wrote a file that read_lewidi_submission or lewidi_scores refuses (or
# scores as a wrong answer) without a word at writing time.
WRITER_CASES = [
    ("soft", lambda s: pd.concat([s, s.iloc[:1]]), "item '10' appears twice"),
    ("soft", lambda s: s.rename(index={"11": "99"}), "no prediction .* item '11'"),
    (
        "soft",
        lambda s: pd.concat([s, s.iloc[:1].rename(index={"10": "99"})]),
        "item '99' is not in test",
    ),
    ("soft", lambda s: _with(s, 1, 0, np.nan), r"item '11', class '1': nan is not"),
    ("soft", lambda s: _with(s, 1, 2, -0.5), r"item '11', class '3': -0.5 is not"),
    ("soft", lambda s: _with(s, 0, 1, "half"), r"item '10', class '2': 'half' is not"),
    (
        "perspectivist",
        lambda p: _with(p, 1, 2, np.nan),
        r"item '10', annotator 'B': the label nan is not one of the classes",
    ),
    (
        "perspectivist",
        lambda p: _with(p, 2, 2, 7),
        r"item '11', annotator 'A': the label 7 is not one of the classes",
    ),
    (
        "perspectivist",
        lambda p: _with(p, 3, 1, "Z"),
        r"no label for .*'11', 'B'.* does not annotate, e\.g\. \('11', 'Z'\)",
    ),
]


@pytest.mark.parametrize(("track", "spoil", "match"), WRITER_CASES)
def test_writer_refuses_what_the_scorer_refuses(tmp_path, track, spoil, match):
    from sklearn_hcal.datasets import write_lewidi_submission

    test, soft, pe = _toy(tmp_path)
    good = {"soft": soft, "perspectivist": pe}
    with pytest.raises(ValueError, match=match):
        write_lewidi_submission(tmp_path / "out", test, **{track: spoil(good[track])})
    assert not (
        tmp_path / "out" / f"CSC_test_{'soft' if track == 'soft' else 'pe'}.tsv"
    ).exists()


@pytest.mark.parametrize("stem", ["sub/CSC_test", "..", ""])
def test_writer_refuses_a_stem_with_a_folder(tmp_path, stem):
    from sklearn_hcal.datasets import write_lewidi_submission

    test, soft, _ = _toy(tmp_path)
    with pytest.raises(ValueError, match="stem must be a file name without a folder"):
        write_lewidi_submission(tmp_path / "out", test, soft=soft, stem=stem)


def test_combining_what_is_not_splits_of_one_data_set_is_refused(tmp_path):
    from sklearn_hcal.datasets import combine_lewidi_splits

    test, _, _ = _toy(tmp_path)
    other = _write(
        tmp_path / "MP_train.json",
        {"1": _item({"A": "0", "B": "1"}, {"0": 0.5, "1": 0.5})},
    )
    with pytest.raises(ValueError, match=r"datasets\[1\] has the classes \['0', '1'\]"):
        combine_lewidi_splits([test, load_lewidi(other, annotators_meta=None)])
    with pytest.raises(ValueError, match=r"datasets\[0\] is a DataFrame, not a split"):
        combine_lewidi_splits([test.frame, test])
    with pytest.raises(ValueError, match="must be a list of the splits .* got a str"):
        combine_lewidi_splits("CSC_train.json")


def test_load_names_a_folder_and_a_metadata_file_passed_as_data(tmp_path):
    test_path = _write(
        tmp_path / "CSC_test.json", _csc(**{"10": _item({"A": "1", "B": "2"}, SOFT_OK)})
    )
    meta = _write(tmp_path / "CSC_annotators_meta.json", {"A": {"Age": "30"}})
    with pytest.raises(ValueError, match="is a folder; pass one harmonised JSON file"):
        load_lewidi(tmp_path)
    with pytest.raises(ValueError, match="no item has any of the fields"):
        load_lewidi(meta)
    with pytest.raises(ValueError, match="annotators_meta .* is a folder"):
        load_lewidi(test_path, annotators_meta=tmp_path)
    # the data file given as its own metadata: names none of its annotators
    with pytest.raises(ValueError, match="names none of the data's 2 annotators"):
        load_lewidi(test_path, annotators_meta=test_path)

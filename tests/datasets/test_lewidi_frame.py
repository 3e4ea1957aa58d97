"""``load_lewidi(path).frame``, the long table, against an independent parse.

The independent parse below reads each real file with the ``json`` module
and plain loops -- no code of the package -- and builds the expected rows:
the annotators of the ``annotators`` field (once each, in order), each
annotator's label (multi-label: the tuple of its labels in the file's label
order), the item's text fields, the annotator's explanations (the
``other_info.explanations`` list is aligned with the ``annotators`` field,
which VariErrNLI repeats once per label; an annotator's explanations are
joined by a newline) and the annotator's metadata (the metadata files have
trailing commas; MP keys its annotators "0" for "Ann0"; an annotator the
metadata lacks is "unknown", NaN for numbers).
"""

import json
import math
import re
import warnings

import pytest

from sklearn_hcal.datasets import load_lewidi

from ..conftest import require_data

FILES = [
    "2023/ArMIS_train.json",
    "2023/HS-Brexit_train.json",
    "2023/MD-Agreement_dev.json",
    "2025/CSC_dev.json",
    "2025/MP_test.json",
    "2025/Paraphrase_train.json",
    "2025/Paraphrase_dev.json",
    "2025/VariErrNLI_train.json",
    "2025/VariErrNLI_dev.json",
]


def _number_or_text(text):
    text = text.strip()
    if re.fullmatch(r"-?\d+(\.0+)?", text):
        return int(float(text))
    return text


def _read_meta(path):
    raw = path.read_text(encoding="utf-8")
    raw = re.sub(r",\s*([}\]])", r"\1", raw)  # the published trailing commas
    return {k.strip(): v for k, v in json.loads(raw).items()}


def _independent_rows(path):
    """(expected rows as dicts, metadata field names) of one file."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    meta, fields = None, []
    meta_path = path.with_name(path.stem.rsplit("_", 1)[0] + "_annotators_meta.json")
    if meta_path.is_file():
        meta = _read_meta(meta_path)
        fields = list(next(iter(meta.values())))
    multilabel = any(
        isinstance(v, dict)
        for r in data.values()
        for v in (r.get("soft_label") or {}).values()
    )
    order = list(next(iter(data.values()))["soft_label"]) if multilabel else None
    rows = []
    for item, record in data.items():
        listed = [a.strip() for a in record["annotators"].split(",") if a.strip()]
        who = []
        for a in listed:
            if a not in who:
                who.append(a)
        ann = record.get("annotations")
        if isinstance(ann, str):  # 2023: paired with annotators by position
            labels = dict(zip(listed, [_number_or_text(x) for x in ann.split(",")]))
        else:
            labels = {}
            for a, value in ann.items():
                if multilabel:
                    chosen = [x.strip() for x in value.split(",") if x.strip()]
                    labels[a.strip()] = tuple(x for x in order if x in chosen)
                else:
                    labels[a.strip()] = _number_or_text(value)
        explanations = (record.get("other_info") or {}).get("explanations")
        joined = {}
        if explanations is not None:
            for a, text in zip(listed, explanations):
                joined[a] = joined[a] + "\n" + text if a in joined else text
        text = (
            record["text"]
            if isinstance(record["text"], dict)
            else {"text": record["text"]}
        )
        for a in who:
            row = {"item": item, "annotator": a, "label": labels[a], **text}
            if explanations is not None:
                row["explanation"] = joined[a]
            if meta is not None:
                key = a if a in meta else a.removeprefix("Ann")
                if key in meta:
                    row.update(meta[key])
                    row["in_metadata"] = True
                else:
                    row.update({f: "unknown" for f in fields})
                    row["in_metadata"] = False
            rows.append(row)
    return rows, fields


def _same(got, expected):
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        try:
            return float(got) == float(expected)
        except (TypeError, ValueError):
            return False
    return got == expected


@pytest.mark.parametrize("name", FILES)
def test_frame_equals_an_independent_parse(name):
    path = require_data("lewidi", *name.split("/"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # soft-label rounding notes
        frame = load_lewidi(path).frame
    expected, fields = _independent_rows(path)
    assert len(frame) == len(expected)
    columns = list(expected[0])
    assert list(frame.columns[:3]) == ["item", "annotator", "label"]
    assert set(frame.columns) == set(columns) | ({"in_metadata"} if fields else set())
    records = frame.to_dict("records")
    for i, (got, want) in enumerate(zip(records, expected)):
        for col, value in want.items():
            if col in fields and value == "unknown":
                # numeric metadata of an unknown annotator is NaN, text "unknown"
                assert got[col] == "unknown" or (
                    isinstance(got[col], float) and math.isnan(got[col])
                ), (name, i, col, got[col])
                continue
            assert _same(got[col], value), (name, i, col, got[col], value)


def test_varierrnli_repeated_annotators_get_all_their_explanations():
    path = require_data("lewidi", "2025", "VariErrNLI_train.json")
    with open(path, encoding="utf-8") as f:
        record = json.load(f)["54811"]
    # Ann2 is listed twice, once per label, with one explanation each
    assert record["annotators"] == "Ann1,Ann2,Ann2,Ann3,Ann4"
    frame = load_lewidi(path).frame.set_index(["item", "annotator"])
    row = frame.loc[("54811", "Ann2")]
    assert row["label"] == ("contradiction", "neutral")
    expl = record["other_info"]["explanations"]
    assert row["explanation"] == expl[1] + "\n" + expl[2]
    assert frame.loc[("54811", "Ann3"), "explanation"] == expl[3]


def test_frame_rows_are_the_annotations_rows():
    # the metrics' table and the long table describe the same annotations
    path = require_data("lewidi", "2025", "MP_test.json")
    data = load_lewidi(path)
    keys = data.frame[["item", "annotator", "label"]]
    assert keys.equals(data.annotations[["item", "annotator", "label"]])


# -- behaviour on small files in the documented formats ----------------------


def _par_record(annotators, annotations=None, explanations=None, **extra):
    record = {
        "annotation task": "paraphrase detection",
        "text": {"Question1": "How old are you?", "Question2": "What is your age?"},
        "annotators": annotators,
        "split": "test",
        "lang": "en",
        "other_info": {} if explanations is None else {"explanations": explanations},
    }
    if annotations is not None:
        record["annotations"] = annotations
        values = list(annotations.values())
        record["soft_label"] = {c: values.count(c) / len(values) for c in ("-1", "1")}
    record.update(extra)
    return record


def _write(tmp_path, data, name="Set_test.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_test_file_without_annotations_gives_one_row_per_listed_annotator(
    tmp_path,
):
    path = _write(
        tmp_path,
        {
            "1": _par_record("Ann1,Ann2", explanations=["same", "similar"]),
            "2": _par_record("Ann2", explanations=["different"]),
        },
    )
    data = load_lewidi(path)
    frame = data.frame
    assert frame[["item", "annotator"]].values.tolist() == [
        ["1", "Ann1"],
        ["1", "Ann2"],
        ["2", "Ann2"],
    ]
    assert frame["label"].isna().all()
    assert frame["explanation"].tolist() == ["same", "similar", "different"]
    assert data.counts is None


def test_annotators_field_and_annotations_must_agree(tmp_path):
    path = _write(
        tmp_path,
        {"7": _par_record("Ann1,Ann2", annotations={"Ann1": "1", "Ann3": "-1"})},
    )
    with pytest.raises(ValueError, match=r"Item '7'.*Ann3"):
        load_lewidi(path)


def test_misaligned_explanations_are_left_out_with_a_warning(tmp_path):
    path = _write(
        tmp_path,
        {
            "1": _par_record(
                "Ann1,Ann2",
                annotations={"Ann1": "1", "Ann2": "-1"},
                explanations=["only one"],
            ),
            "2": _par_record("Ann1", annotations={"Ann1": "1"}, explanations=["fine"]),
        },
    )
    with pytest.warns(UserWarning, match=r"item '1' has 1 explanations for 2"):
        frame = load_lewidi(path).frame
    assert frame["explanation"].isna().tolist() == [True, True, False]


def test_text_fields_named_like_the_keys_are_prefixed(tmp_path):
    record = _par_record("Ann1", annotations={"Ann1": "1"})
    record["text"] = {"label": "a text field called label", "item": "x"}
    frame = load_lewidi(_write(tmp_path, {"1": record})).frame
    assert list(frame.columns) == [
        "item",
        "annotator",
        "label",
        "text_label",
        "text_item",
    ]
    assert frame.loc[0, "label"] == 1 and frame.loc[0, "item"] == "1"


def test_label_map_keeps_the_raw_label(tmp_path):
    record = _par_record("Ann1,Ann2", annotations={"Ann1": "1", "Ann2": "-1"})
    record["soft_label"] = {"-1": 0.0, "1": 1.0}  # the classes after the map
    frame = load_lewidi(_write(tmp_path, {"1": record}), label_map={1: 1, -1: 1}).frame
    assert frame["label"].tolist() == [1, 1]
    assert frame["raw_label"].tolist() == [1, -1]


def test_fetch_lewidi_reads_a_copy_of_the_release_in_the_data_home(tmp_path):
    # <data home>/lewidi/2025/ holding the files as published: no download
    src = require_data("lewidi", "2025", "Paraphrase_dev.json")
    release = tmp_path / "lewidi" / "2025"
    release.mkdir(parents=True)
    for name in ("Paraphrase_dev.json", "Paraphrase_annotators_meta.json"):
        (release / name).write_bytes(src.with_name(name).read_bytes())
    from sklearn_hcal.datasets import fetch_lewidi

    data = fetch_lewidi("par", "dev", data_home=tmp_path, download_if_missing=False)
    assert data.frame.equals(load_lewidi(src).frame)
    assert "Gender" in data.frame.columns
    with pytest.raises(OSError, match="not the published file"):
        fetch_lewidi("par", "dev", data_home=tmp_path, sha256="0" * 64)
    # nothing was written beside the copy
    assert sorted(p.name for p in release.iterdir()) == [
        "Paraphrase_annotators_meta.json",
        "Paraphrase_dev.json",
    ]

"""LeWiDi harmonised JSON: load_lewidi on fixtures, fetch_lewidi on a local server.

The fixtures are small files written here in the documented formats (LeWiDi
2023 readme; LeWiDi 2025 readme and files), with the quirks of the real
files: numeric class names spelled "0.0" in soft labels and "0" in
annotations (MP), spaces around annotator ids (CSC), metadata keyed "0" for
annotator "Ann0" (MP), multi-label annotations "entailment,neutral" and
soft labels rounded to 3 decimals (VariErrNLI). No network is used.
"""

import hashlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.datasets import fetch_lewidi, load_lewidi
from sklearn_hcal.datasets._lewidi_fetch import _lewidi_url
from sklearn_hcal.metrics import (
    manhattan_distance,
    perspectivist_absolute_distance,
    wasserstein_distance,
)
from tests.datasets.test_fetch_chaosnli import (
    _Server,  # one local HTTP server for the fetchers
)


def _write(path, obj):
    path.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    return path


MP = {
    "101": {
        "annotation task": "irony detection",
        "text": {"post": "a post", "reply": "@USER Oh no!!"},
        "number of annotators": 3,
        "annotators": "Ann0,Ann10,Ann16",
        "number of annotations": 3,
        "annotations": {"Ann0": "0", " Ann10": "1", "Ann16": "1"},
        "soft_label": {"0.0": 0.3333333333333333, "1.0": 0.6666666666666666},
        "split": "dev",
        "lang": "en",
        "other_info": {"source": "twitter", "level": 1.0},
    },
    "102": {
        "annotation task": "irony detection",
        "text": {"post": "another", "reply": "sure"},
        "number of annotators": 2,
        "annotators": "Ann0,Ann16",
        "number of annotations": 2,
        "annotations": {"Ann0": "0", "Ann16": "0"},
        "soft_label": {"0.0": 1.0, "1.0": 0},
        "split": "dev",
        "lang": "en",
        "other_info": {"source": "reddit", "level": 2.0},
    },
}
MP_META = {
    "0": {"Age": 19.0, "Gender": "Female"},
    "10": {"Age": 34.0, "Gender": "Male"},
    "16": {"Age": 40.0, "Gender": "Male"},
}


def _par_record(annotations):
    labels = list(annotations.values())
    soft = {str(v): labels.count(str(v)) / len(labels) for v in range(-5, 6)}
    return {
        "annotation task": "paraphrase detection",
        "text": {"Question1": "q1", "Question2": "q2"},
        "number of annotators": len(labels),
        "annotators": ",".join(annotations),
        "number of annotations": len(labels),
        "annotations": annotations,
        "soft_label": soft,
        "split": "dev",
        "lang": "en",
        "other_info": {"explanations": ["..."] * len(labels)},
    }


PAR = {
    "248283": _par_record({"Ann1": "5", "Ann2": "5", "Ann3": "5", "Ann4": "4"}),
    "95686": _par_record({"Ann1": "-4", "Ann2": "-5", "Ann3": "-2", "Ann4": "-5"}),
}

VARIERR = {
    "49807": {
        "annotation task": "natural language inference",
        "text": {"context": "c", "statement": "s"},
        "number of annotators": 4,
        "annotators": "Ann1,Ann2,Ann2,Ann3,Ann4",
        "number of annotations": 5,
        "annotations": {
            "Ann1": "neutral",
            "Ann2": "entailment,neutral",
            "Ann3": "neutral",
            "Ann4": "entailment",
        },
        "soft_label": {
            "contradiction": {"0": 1.0, "1": 0.0},
            "entailment": {"0": 0.5, "1": 0.5},
            "neutral": {"0": 0.25, "1": 0.75},
        },
        "split": "dev",
        "lang": "en",
        "other_info": {"explanations": []},
    },
    "76947": {
        "annotation task": "natural language inference",
        "text": {"context": "c2", "statement": "s2"},
        "number of annotators": 3,
        "annotators": "Ann1,Ann3,Ann3,Ann4",
        "number of annotations": 4,
        "annotations": {
            "Ann1": "neutral",
            "Ann3": "entailment,neutral",
            "Ann4": "neutral",
        },
        "soft_label": {
            "contradiction": {"0": 1.0, "1": 0.0},
            "entailment": {"0": 0.667, "1": 0.333},
            "neutral": {"0": 0.0, "1": 1.0},
        },
        "split": "dev",
        "lang": "en",
        "other_info": {"explanations": []},
    },
}

BREXIT_2023 = {
    "1": {
        "text": "a tweet",
        "annotation task": "hate speech detection",
        "number of annotations": 6,
        "annotations": "1,1,0,0,0,0",
        "annotators": "Ann1,Ann2,Ann3,Ann4,Ann5,Ann6",
        "lang": "en",
        "hard_label": "0",
        "soft_label": {"0": 0.6666666666666666, "1": 0.3333333333333333},
        "split": "train",
        "other_info": {"annotators_group": "group1,group1,group1,group2,group2,group2"},
    },
    "2": {
        "text": "another tweet",
        "annotation task": "hate speech detection",
        "number of annotations": 6,
        "annotations": "1,1,1,1,0,1",
        "annotators": "Ann1,Ann2,Ann3,Ann4,Ann5,Ann6",
        "lang": "en",
        "hard_label": "1",
        "soft_label": {"0": 0.16666666666666666, "1": 0.8333333333333334},
        "split": "train",
        "other_info": {},
    },
}

CONVABUSE_2023 = {
    "c1": {
        "text": '{"prev_agent": "hi", "prev_user": "x", "agent": "y", "user": "z"}',
        "annotation task": "abusive language detection",
        "number of annotations": 3,
        "annotations": "-3,0,1",
        "annotators": "Ann1,Ann2,Ann5",
        "lang": "en",
        "hard_label": "0",
        "soft_label": {"0": 0.6666666666666666, "1": 0.3333333333333333},
        "split": "train",
        "other_info": {},
    }
}


# --------------------------------------------------------------------------- #
# load_lewidi
# --------------------------------------------------------------------------- #
def test_2025_single_label_with_metadata(tmp_path):
    path = _write(tmp_path / "MP_dev.json", MP)
    _write(tmp_path / "MP_annotators_meta.json", MP_META)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_lewidi(path)
    assert data.format == "2025" and not data.multilabel
    assert data.task == "irony detection"
    assert data.classes.tolist() == [0, 1]  # "0.0"/"0" are one class
    assert data.counts.index.tolist() == ["101", "102"]
    assert data.counts.to_numpy().tolist() == [[1, 2], [2, 0]]
    np.testing.assert_allclose(data.soft_labels.to_numpy(), [[1 / 3, 2 / 3], [1, 0]])
    assert data.annotations.columns.tolist() == ["item", "annotator", "label"]
    assert data.annotations["annotator"].tolist() == [
        "Ann0",
        "Ann10",  # the space around " Ann10" is gone
        "Ann16",
        "Ann0",
        "Ann16",
    ]
    assert data.annotations["label"].tolist() == [0, 1, 1, 0, 0]
    # metadata keyed "0", "10", "16" is matched to Ann0, Ann10, Ann16
    assert data.annotators.index.tolist() == ["Ann0", "Ann10", "Ann16"]
    assert data.annotators.loc["Ann10", "Gender"] == "Male"
    assert data.text.loc["101", "reply"] == "@USER Oh no!!"
    assert data.item_info["n_annotators"].tolist() == [3, 2]
    assert data.other_info["102"]["source"] == "reddit"
    # no metadata when asked not to
    assert load_lewidi(path, annotators_meta=None).annotators is None


def test_2025_ordinal_scale_feeds_the_ordinal_metrics(tmp_path):
    data = load_lewidi(_write(tmp_path / "Paraphrase_dev.json", PAR))
    assert data.classes.tolist() == list(range(-5, 6))  # numeric order, not text
    assert data.counts.loc["248283", 5] == 3 and data.counts.loc["95686", -5] == 2
    # predict every item at "5": Manhattan and Wasserstein by hand
    pred = pd.DataFrame(0.0, index=data.counts.index, columns=data.classes)
    pred[5] = 1.0
    # 248283: p̂ (4: .25, 5: .75) -> MD .5, W .25 ;
    # 95686: p̂ (-5: .5, -4: .25, -2: .25) -> MD 2, W .5·10 + .25·9 + .25·7 = 9
    assert manhattan_distance(data.counts, pred) == pytest.approx((0.5 + 2) / 2)
    assert wasserstein_distance(data.counts, pred) == pytest.approx((0.25 + 9) / 2)
    assert wasserstein_distance(data.soft_labels, pred) == pytest.approx(4.625)
    # perspectivist: everyone predicted at 5, ANAD with the 11-point scale
    guess = data.annotations.assign(label=5)
    # item 1: (0 + 0 + 0 + 1) / 4 / 11 ; item 2: (9 + 10 + 7 + 10) / 4 / 11
    expected = (1 / 4 / 11 + 36 / 4 / 11) / 2
    assert perspectivist_absolute_distance(
        data.annotations, guess, order=data.classes
    ) == pytest.approx(expected)


def test_2025_multilabel(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # soft labels rounded to .333 still agree
        data = load_lewidi(_write(tmp_path / "VariErrNLI_dev.json", VARIERR))
    assert data.multilabel
    labels = ["contradiction", "entailment", "neutral"]
    assert data.classes.tolist() == labels
    assert data.annotations.columns.tolist() == ["item", "annotator", *labels]
    ann2 = data.annotations.query("item == '49807' and annotator == 'Ann2'")
    assert ann2[labels].to_numpy().tolist() == [[0, 1, 1]]
    # annotators per label / annotators per item
    assert data.counts.to_numpy().tolist() == [[0, 2, 3], [0, 1, 3]]
    assert data.item_info["n_annotators"].tolist() == [4, 3]
    assert data.item_info["n_annotations"].tolist() == [5, 4]
    np.testing.assert_allclose(
        data.soft_labels.to_numpy(), [[0.0, 0.5, 0.75], [0.0, 0.333, 1.0]]
    )


def test_2023_format(tmp_path):
    data = load_lewidi(_write(tmp_path / "HS-Brexit_train.json", BREXIT_2023))
    assert data.format == "2023" and data.annotators is None
    assert data.classes.tolist() == [0, 1]
    assert data.counts.to_numpy().tolist() == [[4, 2], [1, 5]]
    # annotations pair with annotators by position
    first = data.annotations[data.annotations["item"] == "1"]
    assert first["annotator"].tolist() == [f"Ann{i}" for i in range(1, 7)]
    assert first["label"].tolist() == [1, 1, 0, 0, 0, 0]
    assert data.item_info["hard_label"].tolist() == [0, 1]
    assert data.text.columns.tolist() == ["text"]


def test_2023_labels_outside_the_soft_label_classes(tmp_path):
    path = _write(tmp_path / "ConvAbuse_train.json", CONVABUSE_2023)
    with pytest.warns(UserWarning, match="label_map"):
        data = load_lewidi(path)
    assert data.counts is None
    assert data.annotations["label"].tolist() == [-3, 0, 1]
    mapped = load_lewidi(path, label_map={-3: 1, -2: 1, -1: 1, 0: 0, 1: 0})
    assert mapped.counts.to_numpy().tolist() == [[2, 1]]
    assert mapped.annotations["raw_label"].tolist() == [-3, 0, 1]
    with pytest.raises(ValueError, match="does not map"):
        load_lewidi(path, label_map={0: 0, 1: 0})


def test_unlabelled_file(tmp_path):
    records = {
        k: {f: v for f, v in r.items() if f not in ("annotations", "soft_label")}
        for k, r in MP.items()
    }
    data = load_lewidi(_write(tmp_path / "MP_test.json", records), annotators_meta=None)
    assert data.counts is None and data.soft_labels is None and data.format is None
    assert len(data.annotations) == 0 and len(data.text) == 2


def test_inconsistent_soft_label_warns(tmp_path):
    bad = json.loads(json.dumps(MP))
    bad["102"]["soft_label"] = {"0.0": 0.5, "1.0": 0.5}
    with pytest.warns(UserWarning, match="item '102'"):
        load_lewidi(_write(tmp_path / "MP_dev.json", bad), annotators_meta=None)


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch_lewidi"):
        load_lewidi(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_lewidi(tmp_path / "broken.json")
    with pytest.raises(ValueError, match="harmonised"):
        load_lewidi(_write(tmp_path / "list.json", [1, 2]))
    mixed = {"a": BREXIT_2023["1"], "b": MP["101"]}
    with pytest.raises(ValueError, match="mixes"):
        load_lewidi(_write(tmp_path / "mixed.json", mixed))
    short = json.loads(json.dumps(BREXIT_2023))
    short["1"]["annotators"] = "Ann1,Ann2"
    with pytest.raises(ValueError, match="6 annotations but 2 annotators"):
        load_lewidi(_write(tmp_path / "short.json", short))
    with pytest.raises(FileNotFoundError, match="annotators_meta"):
        load_lewidi(
            _write(tmp_path / "MP_dev.json", MP), annotators_meta=tmp_path / "x"
        )


# --------------------------------------------------------------------------- #
# fetch_lewidi against a local HTTP server
# --------------------------------------------------------------------------- #
@pytest.fixture
def served(tmp_path):
    folder = tmp_path / "served"
    folder.mkdir()
    _write(folder / "MP_dev.json", MP)
    _write(folder / "MP_annotators_meta.json", MP_META)
    _write(folder / "HS-Brexit_train.json", BREXIT_2023)
    server = _Server(folder)
    server.folder = folder
    yield server
    server.close()


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cached(home):
    return sorted(
        p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()
    )


def test_urls_of_the_2025_sets():
    assert _lewidi_url("Par", "Paraphrase_dev.json") == (
        "https://raw.githubusercontent.com/Le-Wi-Di/le-wi-di.github.io/main/"
        "LeWiDi_3-2025/Paraphrase/Paraphrase_dev.json"
    )
    assert _lewidi_url("VariErr-NLI", "VariErrNLI_train.json").endswith(
        "LeWiDi_3-2025/VariErrNLI/VariErrNLI_train.json"
    )


def test_download_verify_cache_then_offline(tmp_path, served):
    home = tmp_path / "home"
    digests = {
        "MP_dev.json": _digest(served.folder / "MP_dev.json"),
        "MP_annotators_meta.json": _digest(served.folder / "MP_annotators_meta.json"),
    }
    url = served.url("MP_dev.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # verified downloads: no warning
        data = fetch_lewidi("MP", "dev", data_home=home, url=url, sha256=digests)
    assert served.requests == 2  # data and metadata
    assert data.counts.to_numpy().tolist() == [[1, 2], [2, 0]]
    assert data.annotators.loc["Ann0", "Age"] == 19.0
    assert _cached(home) == [
        "lewidi/mp/MP_annotators_meta.json",
        "lewidi/mp/MP_dev.json",
    ]
    # cached: no new request, and it loads with the server gone
    fetch_lewidi("mp", "dev", data_home=home, url=url, sha256=digests)
    assert served.requests == 2
    served.close()
    again = fetch_lewidi("mp", "dev", data_home=home, download_if_missing=False)
    assert again.counts.equals(data.counts)


def test_checksum_mismatch_caches_nothing(tmp_path, served):
    home = tmp_path / "home"
    with pytest.raises(OSError, match="Checksum mismatch"):
        fetch_lewidi(
            "mp", "dev", data_home=home, url=served.url("MP_dev.json"), sha256="0" * 64
        )
    assert _cached(home) == []


def test_unknown_checksum_is_recorded_and_checked(tmp_path, served):
    home = tmp_path / "home"
    url = served.url("HS-Brexit_train.json")
    with pytest.warns(UserWarning, match="No published checksum"):
        data = fetch_lewidi("HS-Brexit", "train", data_home=home, url=url)
    assert data.format == "2023"
    cached = home / "lewidi" / "hsbrexit" / "HS-Brexit_train.json"
    recorded = cached.with_name(cached.name + ".sha256").read_text().strip()
    assert recorded == _digest(served.folder / "HS-Brexit_train.json")
    # a corrupted cache is detected through the record ...
    cached.write_bytes(cached.read_bytes().replace(b"tweet", b"tweak"))
    with pytest.raises(OSError, match="corrupt"):
        fetch_lewidi("HS-Brexit", data_home=home, url=url, download_if_missing=False)
    # ... and downloaded again when allowed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fetch_lewidi("HS-Brexit", data_home=home, url=url)
    messages = [(w.category, str(w.message)) for w in caught]
    assert any(c is RuntimeWarning and "corrupt" in m for c, m in messages)
    assert any(c is UserWarning and "No published" in m for c, m in messages)
    assert all(w.filename == __file__ for w in caught)  # points at the caller
    assert _digest(cached) == recorded


def test_offline_is_a_clear_error(tmp_path, served):
    url = served.url("MP_dev.json")
    served.close()  # nothing listens on that port any more
    with pytest.raises(OSError, match="load_lewidi"):
        fetch_lewidi("mp", "dev", data_home=tmp_path / "home", url=url, timeout=5)
    assert _cached(tmp_path / "home") == []


def test_fetch_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="url="):
        fetch_lewidi("hs-brexit", data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match="download_if_missing=False"):
        fetch_lewidi("csc", "dev", data_home=tmp_path, download_if_missing=False)


def test_file_url(tmp_path):
    src = _write(tmp_path / "HS-Brexit_dev.json", BREXIT_2023)
    with pytest.warns(UserWarning, match="No published checksum"):
        data = fetch_lewidi("brexit", url=src.as_uri(), data_home=tmp_path / "h")
    assert data.counts.shape == (2, 2)
    # pinning the digest verifies it
    verified = fetch_lewidi(
        "brexit2", url=src.as_uri(), sha256=_digest(src), data_home=tmp_path / "h"
    )
    assert verified.counts.equals(data.counts)

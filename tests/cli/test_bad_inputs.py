"""Bad inputs to the ``hcal`` command line: one table, one answer per case.

Every row of :data:`CASES` is (case id, files written into ``tmp_path``,
argv, expected exit status, a regular expression searched in standard
error). The command runs in ``tmp_path`` (relative file names) through the
real entry point, ``main(argv)``; a few rows also run the installed console
script. For exit status 2 standard error must be exactly one line
``hcal: error: ...`` naming the file and the offending line, row, uid or
value -- never a traceback, never advice to load a file unsafely or to
softmax probabilities. A row's ``source`` names the kind of bad input it
protects against; add new bad inputs here so that the matrix grows in one
place.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from sklearn_hcal.cli import main

HCAL = Path(sys.executable).with_name("hcal")

# --------------------------------------------------------------------------- #
# files
# --------------------------------------------------------------------------- #
RNG = np.random.RandomState(0)
COUNTS = RNG.multinomial(5, [0.5, 0.3, 0.2], size=6)  # (6, 3) integer counts
UNIFORM = np.full((6, 3), 1 / 3)
FLOAT32_SOFTMAX = np.full((6, 3), 1 / 3, dtype=np.float32)
FLOAT32_SOFTMAX[0] = [1.0, 2e-8, 0.0]  # sum within 1e-6; 1 - Σq² = -4.4e-16
FRACTIONAL = COUNTS.astype(float)
FRACTIONAL[2, 1] = 2.5  # rows 0 and 1 are counts summing to 5, not 1
NOT_NPY = bytes(np.random.RandomState(1).randint(0, 256, 200, dtype=np.uint8))


def _npy_bytes(arr, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


def _npz_bytes() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, a=UNIFORM)
    return buf.getvalue()


def _csv(header, rows) -> str:
    return "\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows]) + "\n"


def _jsonl(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


COUNTS_CSV = _csv(["uid", "a", "b", "c"], [[f"u{i}", *r] for i, r in enumerate(COUNTS)])
# Probabilities rounded to 3 decimals: rows off by <= 1.5e-3.
ROUNDED = np.round(RNG.dirichlet([1, 1, 1], size=6), 3)
ROUNDED[0] = [0.334, 0.333, 0.334]  # sums to 1.001, within 5e-4 * 3
ROUNDED_CSV = _csv(
    ["uid", "a", "b", "c"], [[f"u{i}", *r] for i, r in enumerate(ROUNDED)]
)
# Probabilities further off (2 decimals, or mass lost): rows sum to 0.99, 0.9
OFF_CSV = _csv(
    ["uid", "a", "b", "c"],
    [
        [f"u{i}", 0.33, 0.33, 0.33] if i != 3 else [f"u{i}", 0.3, 0.3, 0.3]
        for i in range(6)
    ],
)
LOGITS = np.round(RNG.normal(size=(6, 3)), 3)
LOGITS_CSV = _csv(["uid", "a", "b", "c"], [[f"u{i}", *r] for i, r in enumerate(LOGITS)])
HUMAN_OFF_CSV = _csv(
    ["a", "b", "c"], [[0.5, 0.25, 0.25], [0.4, 0.3, 0.2], [0.2, 0.2, 0.6]] * 2
)


class Case(NamedTuple):
    id: str
    files: dict
    argv: list
    status: int
    stderr: str  # regular expression searched in standard error
    source: str = ""  # the kind of bad input the row protects against
    stdout: str = ""  # a regular expression searched in standard output


def _lewidi_2025(items: dict) -> str:
    """A LeWiDi 2025 file: ``{item: {annotator: label}}``, soft labels from
    the annotations (three classes 1, 2, 3)."""
    records = {}
    for item, given in items.items():
        labels = list(given.values())
        records[item] = {
            "annotators": ",".join(given),
            "annotations": given,
            "soft_label": {c: labels.count(c) / len(labels) for c in "123"},
            "text": "t",
        }
    return json.dumps(records)


def _lewidi_run(train: str, predict: str, *more: str) -> list:
    """``hcal lewidi`` training on ``train``, predicting ``predict``."""
    return ["lewidi", "--train", train, "--predict", predict, "--out", "o", *more]


# i1: shares [.5, .25, .25], i2: [0, .25, .75] on the scale 1 < 2 < 3
LEWIDI = {
    "t.json": _lewidi_2025(
        {
            "i1": {"A1": "1", "A2": "1", "A3": "2", "A4": "3"},
            "i2": {"A1": "3", "A2": "3", "A3": "3", "A4": "2"},
        }
    )
}
EXACT_TSV = "i1\t[0.5, 0.25, 0.25]\ni2\t[0.0, 0.25, 0.75]\n"
# ConvAbuse (2023): severities -3..1 annotated, soft labels abusive or not
CONVABUSE = json.dumps(
    {
        "1": {
            "annotators": "A1,A2,A3",
            "annotations": "-3,0,1",
            "soft_label": {"0": 0.667, "1": 0.333},
            "hard_label": "0",
            "text": "t",
        }
    }
)
VEN = json.dumps(
    {
        "e1": {
            "annotators": "A1,A2,A2,A3",
            "annotations": {
                "A1": "neutral",
                "A2": "entailment,neutral",
                "A3": "contradiction",
            },
            "soft_label": {
                "contradiction": {"0": 0.667, "1": 0.333},
                "entailment": {"0": 0.667, "1": 0.333},
                "neutral": {"0": 0.333, "1": 0.667},
            },
        }
    }
)
LEV = ["evaluate", "t.json", "--format", "json", "--pred"]

EV = ["evaluate"]
C = {"c.npy": COUNTS}
CU = dict(C, **{"p.npy": UNIFORM})
NO_PICKLE = r"^(?!.*pickle)hcal: error: "  # never a word about loading pickles

CASES = [
    # ---- a crash on valid input ------------------------------------------- #
    Case(
        "float32_softmax_row_with_plots",
        {"c.npy": COUNTS, "p.npy": FLOAT32_SOFTMAX},
        EV + ["c.npy", "--pred", "m=p.npy", "--plots", "figs"],
        0,
        r"hcal: wrote figs/disagreement_reliability\.png",
        "crash on valid input",
    ),
    # ---- the fractional count blames its own row --------------------------- #
    Case(
        "fractional_count_npy",
        {"c.npy": FRACTIONAL, "p.npy": UNIFORM},
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"^(?!.*row 0)hcal: error: c\.npy .*row 2 holds the non-integer value 2\.5 "
        r"\(column 1\)",
        "fractional count",
    ),
    Case(
        "fractional_count_csv_names_line_uid_and_column",
        {
            "c.csv": _csv(["uid", "a", "b"], [["x", 3, 1], ["y", 4, 0], ["z", 1, 2.5]]),
            "p.npy": np.full((3, 2), 0.5),
        },
        EV + ["c.csv", "--pred", "m=p.npy"],
        2,
        r"c\.csv .*line 4 \(uid 'z'\) holds the non-integer value 2\.5 "
        r"\(column 'b'\)",
        "fractional count",
    ),
    Case(
        "fractional_count_jsonl_names_line_and_uid",
        {
            "c.jsonl": _jsonl(
                [
                    {"uid": "a", "label_count": [3, 1, 0]},
                    {"uid": "b", "label_count": [1, 2.5, 1]},
                ]
            ),
            "p.npy": np.full((2, 3), 1 / 3),
        },
        EV + ["c.jsonl", "--pred", "m=p.npy"],
        2,
        r"c\.jsonl .*line 2 \(uid 'b'\) holds the non-integer value 2\.5",
        "fractional count",
    ),
    # ---- .npy files that are not arrays: no pickle advice ------------------ #
    Case(
        "random_bytes_npy_predictions",
        dict(C, **{"p.npy": NOT_NPY}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"p\.npy: not a valid \.npy array",
        "random-bytes .npy",
    ),
    Case(
        "random_bytes_npy_counts",
        {"c.npy": NOT_NPY, "p.npy": UNIFORM},
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"c\.npy: not a valid \.npy array",
        "random-bytes .npy",
    ),
    Case(
        "object_array_npy",
        dict(C, **{"p.npy": _npy_bytes(np.array([[1, None]] * 6), allow_pickle=True)}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"p\.npy: expected an array of numbers, got dtype object",
        "random-bytes .npy",
    ),
    Case(
        "npz_archive_named_npy",
        dict(C, **{"p.npy": _npz_bytes()}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"p\.npy: not a valid \.npy array: it is a zip archive",
        "random-bytes .npy",
    ),
    Case(
        "truncated_npy",
        dict(C, **{"p.npy": _npy_bytes(UNIFORM)[:-8]}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"p\.npy: not a valid \.npy array: the data is truncated",
    ),
    Case(
        "empty_npy",
        dict(C, **{"p.npy": b""}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        NO_PICKLE + r"p\.npy: not a valid \.npy array: the file is empty",
    ),
    # ---- a 1-D prediction file for 3 classes ------------------------------ #
    Case(
        "one_d_predictions_for_three_classes",
        dict(C, **{"p.npy": np.full(6, 0.4)}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"^(?!.*have 2 classes)hcal: error: p\.npy is 1-D, which means "
        r"P\(second class\) of a binary problem, but 3 classes were expected "
        r"\(c\.npy has 3\)",
        "1-D predictions",
    ),
    Case(
        "one_d_logits_for_three_classes",
        dict(C, **{"z.npy": np.linspace(-1, 1, 6)}),
        EV + ["c.npy", "--pred", "m=z.npy", "--logits"],
        2,
        r"z\.npy is 1-D, which means the logit of the second class of a binary "
        r"problem, but c\.npy has 3 classes",
        "1-D predictions",
    ),
    # ---- output folders that cannot be written ---------------------------- #
    Case(
        "plots_folder_in_proc",
        CU,
        EV + ["c.npy", "--pred", "m=p.npy", "--plots", "/proc/hcal-x"],
        2,
        r"hcal: error: --plots /proc/hcal-x: cannot create the folder",
        "unwritable --plots",
    ),
    Case(
        "plots_folder_under_a_file",
        dict(CU, **{"afile": "x"}),
        EV + ["c.npy", "--pred", "m=p.npy", "--plots", "afile/figs"],
        2,
        r"--plots afile/figs: cannot create the folder: a part of the path is a "
        r"file",
        "unwritable --plots",
    ),
    Case(
        "plots_folder_is_a_file",
        dict(CU, **{"afile": "x"}),
        EV + ["c.npy", "--pred", "m=p.npy", "--plots", "afile"],
        2,
        r"--plots afile: exists and is not a folder",
    ),
    Case(
        "demo_out_in_proc",
        {},
        ["demo", "--quick", "--out", "/proc/hcal-x"],
        2,
        r"hcal: error: --out /proc/hcal-x: cannot create the folder",
        "unwritable --out",
    ),
    Case(
        "demo_out_under_a_file",
        {"afile": "x"},
        ["demo", "--quick", "--out", "afile/sub"],
        2,
        r"hcal: error: --out afile/sub: cannot create the folder: a part of the "
        r"path is a file",
        "unwritable --out",
    ),
    # ---- no subcommand ---------------------------------------------------- #
    Case(
        "no_subcommand",
        {},
        [],
        2,
        r"\Ahcal: error: a command is required: demo, evaluate, lewidi or agreement "
        r"\(try 'hcal --help'\)\n\Z",
        "no subcommand",
    ),
    # ---- rounded probabilities, --renormalize ------------------------------ #
    Case(
        "probabilities_rounded_to_3_decimals",
        {"c.csv": COUNTS_CSV, "p.csv": ROUNDED_CSV},
        EV + ["c.csv", "--pred", "m=p.csv"],
        0,
        r"\A\Z",  # read as probabilities, without a word
        "rounded probabilities",
    ),
    Case(
        "probabilities_off_advise_renormalize_not_logits",
        {"c.csv": COUNTS_CSV, "p.csv": OFF_CSV},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"^(?!.*--logits)hcal: error: p\.csv rows must sum to 1 .*line 2 \(uid "
        r"'u0'\) sums to 0\.99\. .*--renormalize divides each row by its sum",
        "rounded probabilities",
    ),
    Case(
        "renormalize_option_warns",
        {"c.csv": COUNTS_CSV, "p.csv": OFF_CSV},
        EV + ["c.csv", "--pred", "m=p.csv", "--renormalize"],
        0,
        r"\Ahcal: warning: p\.csv: --renormalize divided 6 prediction rows by "
        r"their sums \(first: line 2 \(uid 'u0'\) summed to 0\.99\)\.\n\Z",
        "rounded probabilities",
    ),
    Case(
        "logits_without_option_advise_logits_only",
        {"c.csv": COUNTS_CSV, "z.csv": LOGITS_CSV},
        EV + ["c.csv", "--pred", "m=z.csv"],
        2,
        r"^(?!.*--renormalize)hcal: error: z\.csv must be non-negative "
        r"probabilities; line \d \(uid 'u\d'\), column '[abc]': -[0-9.]+\. If these "
        r"are logits .*pass --logits",
        "rounded probabilities",
    ),
    Case(
        "scores_above_one_advise_both",
        {"c.csv": COUNTS_CSV, "p.csv": COUNTS_CSV},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"line 2 \(uid 'u0'\) sums to 5\. If these are logits .*--logits; if they "
        r"are non-negative weights, --renormalize",
    ),
    Case(
        "renormalize_with_logits_is_a_usage_error",
        {"c.csv": COUNTS_CSV, "z.csv": LOGITS_CSV},
        EV + ["c.csv", "--pred", "m=z.csv", "--logits", "--renormalize"],
        2,
        r"--renormalize: not allowed with argument --logits \(try 'hcal evaluate "
        r"--help'\)",
    ),
    Case(
        "human_probabilities_off_advise_renormalize",
        {"h.csv": HUMAN_OFF_CSV, "p.npy": UNIFORM},
        EV + ["h.csv", "--pred", "m=p.npy"],
        2,
        r"^(?!.*--logits)hcal: error: h\.csv .*line 3 sums to 0\.9.*--renormalize",
        "rounded probabilities",
    ),
    Case(
        "renormalize_human_probabilities_warns",
        {"h.csv": HUMAN_OFF_CSV, "p.npy": UNIFORM},
        EV + ["h.csv", "--pred", "m=p.npy", "--renormalize"],
        0,
        r"\Ahcal: warning: h\.csv: --renormalize divided 2 label-histogram rows "
        r"by their sums \(first: line 3 summed to 0\.9\)\.\n\Z",
        "rounded probabilities",
    ),
    Case(
        "renormalize_chaosnli_json_names_model_and_uid",
        {
            "c.jsonl": _jsonl(
                [
                    {"uid": "a", "label_count": [3, 1, 0]},
                    {"uid": "b", "label_count": [0, 1, 3]},
                ]
            ),
            "p.json": json.dumps(
                {
                    "rob": {
                        "a": {"predicted_probabilities": [0.6, 0.2, 0.1]},
                        "b": {"predicted_probabilities": [0.1, 0.2, 0.7]},
                    }
                }
            ),
        },
        EV + ["c.jsonl", "--pred", "m=p.json", "--renormalize"],
        0,
        r"\Ahcal: warning: p\.json \(model 'rob'\): --renormalize divided one "
        r"prediction row by its sum \(uid 'a' summed to 0\.9\)\.\n\Z",
        "rounded probabilities",
    ),
    Case(
        "renormalize_cannot_fix_negative_values",
        {"c.csv": COUNTS_CSV, "z.csv": LOGITS_CSV},
        EV + ["c.csv", "--pred", "m=z.csv", "--renormalize"],
        2,
        r"^(?!.*--renormalize divides)hcal: error: z\.csv must be non-negative .*"
        r"pass --logits",
    ),
    Case(
        "row_of_zeros_gets_no_renormalize_advice",
        {
            "c.npy": np.ones((3, 2), dtype=int),
            "p.npy": np.array([[0.4, 0.5]] + [[0, 0]] * 2),
        },
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"^(?!.*--renormalize)(?!.*--logits)hcal: error: p\.npy rows must sum to "
        r"1 .*row 0 sums to 0\.9\.$",
    ),
    Case(
        "human_row_of_zeros_gets_no_renormalize_advice",
        {"h.csv": "a,b\n0.5,0.5\n0,0\n0.2,0.2\n", "p.npy": np.full((3, 2), 0.5)},
        EV + ["h.csv", "--pred", "m=p.npy", "--metrics", "jsd"],
        2,
        r"^(?!.*--renormalize)hcal: error: h\.csv .*line 3 sums to 0\.$",
    ),
    # ---- class counts, ids, empty files (one line each) ------------------- #
    Case(
        "class_count_mismatch",
        dict(C, **{"p.npy": np.full((6, 2), 0.5)}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"p\.npy has 2 classes \(columns\) but 3 were expected \(c\.npy has 3\)",
        "K mismatch",
    ),
    Case(
        "class_count_mismatch_logits",
        dict(C, **{"z.npy": np.zeros((6, 2))}),
        EV + ["c.npy", "--pred", "m=z.npy", "--logits"],
        2,
        r"z\.npy has 2 columns but 3 classes were expected",
        "K mismatch",
    ),
    Case(
        "class_names_differ",
        {"c.csv": COUNTS_CSV, "p.csv": ROUNDED_CSV.replace("uid,a,b,c", "uid,a,b,x")},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"p\.csv \(m\): the class names \['a', 'b', 'x'\] differ from those of "
        r"c\.csv",
        "K mismatch",
    ),
    Case(
        "unknown_uid",
        {"c.csv": COUNTS_CSV, "p.csv": ROUNDED_CSV.replace("u5,", "u9,")},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"p\.csv \(m\): unknown uid 'u9' \(not in c\.csv\)",
        "ids",
    ),
    Case(
        "duplicate_uid",
        {"c.csv": COUNTS_CSV.replace("u5,", "u4,"), "p.csv": ROUNDED_CSV},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"c\.csv: uid 'u4' appears 2 times \(line 6 \(uid 'u4'\) and line 7",
        "ids",
    ),
    Case(
        "predictions_by_uid_but_counts_without_ids",
        dict(C, **{"p.csv": ROUNDED_CSV}),
        EV + ["c.npy", "--pred", "m=p.csv"],
        2,
        r"p\.csv \(m\): the predictions are keyed by uid but c\.npy has no item ids",
        "ids",
    ),
    Case(
        "row_count_mismatch",
        dict(C, **{"p.npy": UNIFORM[:4]}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"p\.npy \(m\): 4 rows of predictions but c\.npy has 6 items",
    ),
    Case(
        "empty_csv",
        dict(C, **{"p.csv": ""}),
        EV + ["c.npy", "--pred", "m=p.csv"],
        2,
        r"p\.csv: not a readable CSV file",
        "empty files",
    ),
    Case(
        "header_only_csv",
        dict(C, **{"p.csv": "a,b,c\n"}),
        EV + ["c.npy", "--pred", "m=p.csv"],
        2,
        r"p\.csv: the file has a header but no data rows",
        "empty files",
    ),
    Case(
        "empty_jsonl",
        {"c.jsonl": "\n", "p.npy": UNIFORM},
        EV + ["c.jsonl", "--pred", "m=p.npy"],
        2,
        r"c\.jsonl: the file holds no items",
        "empty files",
    ),
    Case(
        "empty_json",
        dict(C, **{"p.json": ""}),
        EV + ["c.npy", "--pred", "m=p.json"],
        2,
        r"p\.json: not valid JSON \(line 1",
        "empty files",
    ),
    Case(
        "empty_json_object",
        dict(C, **{"p.json": "{}"}),
        EV + ["c.npy", "--pred", "m=p.json"],
        2,
        r"p\.json: expected the ChaosNLI prediction format",
        "empty files",
    ),
    Case(
        "no_rows_npy",
        dict(C, **{"p.npy": np.zeros((0, 3))}),
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"p\.npy: the array has no rows",
        "empty files",
    ),
    # ---- values named with the file's own rows ---------------------------- #
    Case(
        "nan_in_logits_names_the_row",
        dict(
            C, **{"z.npy": np.where(np.eye(6, 3) > 0, np.nan, 0.0)[[1, 0, 2, 3, 4, 5]]}
        ),
        EV + ["c.npy", "--pred", "m=z.npy", "--logits"],
        2,
        r"z\.npy contains NaN or infinity \(row 0, column 1: nan\)",
    ),
    Case(
        "infinity_in_csv_counts",
        {"c.csv": "a,b\n1,2\n3,inf\n", "p.npy": np.full((2, 2), 0.5)},
        EV + ["c.csv", "--pred", "m=p.npy"],
        2,
        r"c\.csv contains NaN or infinity \(line 3, column 'b': inf\)",
    ),
    Case(
        "negative_count_names_line_and_uid",
        {"c.csv": "uid,a,b\nx,1,0\ny,-1,3\n", "p.npy": np.full((2, 2), 0.5)},
        EV + ["c.csv", "--pred", "m=p.npy"],
        2,
        r"c\.csv must be non-negative; line 3 \(uid 'y'\), column 'a': -1\.0",
    ),
    Case(
        "zero_annotations_row",
        {"c.csv": "a,b\n1,0\n0,0\n", "p.npy": np.full((2, 2), 0.5)},
        EV + ["c.csv", "--pred", "m=p.npy"],
        2,
        r"c\.csv has rows with zero annotations \(first at line 3\)",
    ),
    Case(
        "json_prediction_row_names_model_and_uid",
        {
            "c.jsonl": _jsonl([{"uid": "a", "label_count": [3, 1, 0]}]),
            "p.json": json.dumps(
                {"rob": {"a": {"predicted_probabilities": [0.5, 0.6, -0.1]}}}
            ),
        },
        EV + ["c.jsonl", "--pred", "m=p.json"],
        2,
        r"p\.json \(model 'rob'\) must be non-negative probabilities; uid 'a', "
        r"predicted_probabilities\[2\]: -0\.1",
    ),
    Case(
        "single_class_column_csv",
        {"c.csv": "a,b\n1,2\n3,1\n", "p.csv": "b\n0.5\n0.5\n"},
        EV + ["c.csv", "--pred", "m=p.csv"],
        2,
        r"p\.csv has a single class column \('b'\)",
    ),
    Case(
        "one_class_histograms",
        {"c.npy": np.ones((3, 1)), "p.npy": np.full((3, 2), 0.5)},
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"c\.npy: label histograms need at least 2 classes \(columns\), got 1",
    ),
    Case(
        "directory_as_counts",
        {"d/x": "", "p.npy": UNIFORM},
        EV + ["d", "--pred", "m=p.npy"],
        2,
        r"d: is a directory, expected a file",
    ),
    Case(
        "unsupported_suffix",
        {"c.txt": "1 2\n", "p.npy": UNIFORM},
        EV + ["c.txt", "--pred", "m=p.npy"],
        2,
        r"c\.txt: unsupported file type '\.txt' for label histograms",
    ),
    Case(
        "missing_counts_file",
        {"p.npy": UNIFORM},
        EV + ["nope.npy", "--pred", "m=p.npy"],
        2,
        r"nope\.npy: no such file",
    ),
    Case(
        "missing_prediction_file",
        C,
        EV + ["c.npy", "--pred", "m=gone.csv"],
        2,
        r"gone\.csv: no such file",
    ),
    Case(
        "one_d_histograms",
        {"c.npy": np.ones(5, dtype=int), "p.npy": np.full((5, 2), 0.5)},
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"c\.npy: label histograms must be 2-D .* shape \(5,\)",
    ),
    Case(
        "three_d_histograms",
        {"c.npy": np.ones((2, 2, 2), dtype=int), "p.npy": np.full((2, 2), 0.5)},
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"c\.npy: expected a 2-D array \(n_items, n_classes\), got shape "
        r"\(2, 2, 2\)",
    ),
    Case(
        "text_cell_in_csv",
        {"c.csv": "item,a,b\nx,1,2\n", "p.npy": np.full((1, 2), 0.5)},
        EV + ["c.csv", "--pred", "m=p.npy"],
        2,
        r"c\.csv: line 2, column 'item': 'x' is not a number .*--id-column",
    ),
    Case(
        "prediction_row_sums_to_1_2",
        {
            "c.npy": np.ones((3, 2), dtype=int),
            "p.npy": np.array([[0.5, 0.5]] * 2 + [[0.9, 0.3]]),
        },
        EV + ["c.npy", "--pred", "m=p.npy"],
        2,
        r"^(?!.*--logits)hcal: error: p\.npy rows must sum to 1 .*row 2 sums to "
        r"1\.2\.",
    ),
    Case(
        "broken_jsonl_line",
        {
            "c.jsonl": '{"uid": "a", "label_count": [1, 2]}\n{"uid": "b"\n',
            "p.npy": np.full((2, 2), 0.5),
        },
        EV + ["c.jsonl", "--pred", "m=p.npy"],
        2,
        r"c\.jsonl: line 2 is not valid JSON",
    ),
    Case(
        "json_predictions_but_counts_without_ids",
        {
            "c.npy": np.ones((2, 3), dtype=int),
            "p.json": json.dumps(
                {
                    "m": {
                        "a": {"predicted_probabilities": [1, 0, 0]},
                        "b": {"predicted_probabilities": [0, 1, 0]},
                    }
                }
            ),
        },
        EV + ["c.npy", "--pred", "m=p.json"],
        2,
        r"p\.json \(m\): the predictions are keyed by uid but c\.npy has no item "
        r"ids",
    ),
    Case(
        "logits_option_on_a_chaosnli_json",
        {
            "c.csv": "uid,x,y\na,1,2\nb,1,1\n",
            "p.json": json.dumps({"m": {"a": {"predicted_probabilities": [1, 0]}}}),
        },
        EV + ["c.csv", "--pred", "m=p.json", "--logits"],
        2,
        r"p\.json: --logits does not apply to a ChaosNLI prediction file",
    ),
    Case(
        "same_prediction_name_twice",
        CU,
        EV + ["c.npy", "--pred", "m=p.npy", "--pred", "m=p.npy"],
        2,
        r"--pred m=p\.npy: the name 'm' is used twice",
    ),
    Case(
        "count_metric_on_single_labels",
        {"c.npy": np.eye(3, dtype=int)[[0, 1, 2, 0]], "p.npy": np.full((4, 3), 1 / 3)},
        EV + ["c.npy", "--pred", "m=p.npy", "--metrics", "disagreement_ce"],
        2,
        r"disagreement_ce.*n_i >= 2",
    ),
    # ---- arguments -------------------------------------------------------- #
    *[
        Case(f"evaluate_argument_{i}", CU, EV + ["c.npy", *extra], 2, pattern)
        for i, (extra, pattern) in enumerate(
            [
                (["--pred", "=x.npy"], r"expected NAME=FILE or FILE"),
                (["--pred", " "], r"expected NAME=FILE or FILE"),
                (["--pred", "noequals.npy"], r"noequals\.npy: no such file"),
                (["--pred", "m=p.npy", "--format", "xml"], r"--format: invalid choice"),
                (
                    ["--pred", "m=p.npy", "--metrics", "accuracy_of_everything"],
                    r"--metrics: unknown metric 'accuracy_of_everything'",
                ),
                (["--pred", "m=p.npy", "--ties", "middle"], r"--ties: invalid choice"),
                (
                    ["--pred", "m=p.npy", "--transpose", "--long"],
                    r"--long: not allowed with argument --transpose",
                ),
                (["--pred", "m=p.npy", "--bootstrap", "-1"], r"--bootstrap: expected "),
                ([], r"the following arguments are required: --pred"),
            ]
        )
    ],
    *[
        Case(f"demo_argument_{i}", {}, ["demo", *extra], 2, pattern)
        for i, (extra, pattern) in enumerate(
            [
                (["--val-annotations", "1"], r"--val-annotations must be at least 2"),
                (["--device", "tpu"], r"--device: invalid choice: 'tpu'"),
                (["--seed", "x"], r"--seed: expected an integer, got 'x'"),
                (["--epochs", "-3"], r"--epochs: expected a non-negative integer"),
            ]
        )
    ],
    Case("unknown_command", {}, ["frobnicate"], 2, r"invalid choice: 'frobnicate'"),
    # ---- LeWiDi submissions as participants write them -------------------- #
    Case(
        # the lists follow the truth file's class order; --order reorders the
        # scale only (it used to re-read the lists: 1.0 instead of 0)
        "lewidi_order_keeps_the_class_order_of_lists",
        dict(LEWIDI, **{"p.tsv": EXACT_TSV}),
        LEV + ["m=p.tsv", "--order", "3,2,1"],
        0,
        r"^$",
        "--order re-reads lists",
        stdout=r'"manhattan_distance": 0\.0,\s+"wasserstein_distance": 0\.0\s',
    ),
    Case(
        # a repeated id used to keep its last row (JSON and TSV refuse it)
        "lewidi_csv_repeats_an_item",
        dict(LEWIDI, **{"p.csv": "id,1,2,3\ni1,1,0,0\ni2,0,0,1\ni1,0.5,0.25,0.25\n"}),
        LEV + ["m=p.csv"],
        2,
        r"p\.csv: uid 'i1' appears 2 times \(line 2 .* and line 4",
        "repeated CSV item",
    ),
    Case(
        "lewidi_tsv_nan",
        dict(LEWIDI, **{"p.tsv": "i1\t[0.5, nan, 0.5]\ni2\t[0, 0, 1]\n"}),
        LEV + ["m=p.tsv"],
        2,
        r"p\.tsv: line 1 \(item 'i1'\): the list holds 'nan', not a number",
        "NaN in a TSV list",
    ),
    Case(
        "lewidi_rows_rounded_to_two_decimals",
        dict(LEWIDI, **{"p.tsv": "i1\t[0.33, 0.33, 0.33]\ni2\t[0.34, 0.33, 0.34]\n"}),
        LEV + ["m=p.tsv"],
        0,
        r"hcal: warning: p\.tsv: 2 rows of probabilities did not sum to 1 and were "
        r"divided by their sums \(rounded to 2 decimals; first: item 'i1' summed "
        r"to 0\.99\)",
        "two-decimal submission",
    ),
    Case(
        "lewidi_rows_off_without_renormalize",
        dict(LEWIDI, **{"p.tsv": "i1\t[0.3, 0.3, 0.3]\ni2\t[0, 0, 1]\n"}),
        LEV + ["m=p.tsv"],
        2,
        r"p\.tsv: item 'i1': the probabilities sum to 0\.9, not 1 "
        r"\(--renormalize divides",
    ),
    Case(
        "lewidi_renormalize_allowed",
        dict(LEWIDI, **{"p.tsv": "i1\t[0.3, 0.3, 0.3]\ni2\t[0, 0, 1]\n"}),
        LEV + ["m=p.tsv", "--renormalize"],
        0,
        r"one row of probabilities did not sum to 1 .*\(--renormalize; first: item "
        r"'i1' summed to 0\.9\)",
        "--renormalize with LeWiDi",
    ),
    Case(
        "lewidi_refuses_histogram_options",
        dict(LEWIDI, **{"p.tsv": EXACT_TSV}),
        LEV + ["m=p.tsv", "--logits", "--bootstrap", "5"],
        2,
        r"--logits, --bootstrap: not available with a LeWiDi \.json truth",
    ),
    Case(
        "histograms_refuse_lewidi_options",
        CU,
        EV + ["c.npy", "--pred", "m=p.npy", "--official-rounding"],
        2,
        r"--official-rounding: not available with label histograms",
        "options declared with their truth",
    ),
    Case(
        "lewidi_label_map",
        {"ConvAbuse_dev.json": CONVABUSE, "p.json": '{"1": [0.5, 0.5]}'},
        ["evaluate", "ConvAbuse_dev.json", "--format", "json", "--pred", "m=p.json"]
        + ["--label-map=-3:1,-2:1,-1:1,0:0,1:0"],
        0,
        r"^$",
        "--label-map",
        # the truth is the mapped annotations' share [2/3, 1/3]
        stdout=r'"manhattan_distance": 0\.333333333333333',
    ),
    Case(
        "lewidi_label_map_misses_a_label",
        {"ConvAbuse_dev.json": CONVABUSE, "p.json": '{"1": [0.5, 0.5]}'},
        ["evaluate", "ConvAbuse_dev.json", "--pred", "m=p.json"]
        + ["--label-map=0:0,1:0"],
        2,
        r"--label-map: label_map does not map the labels \[-3\]",
    ),
    Case(
        "lewidi_label_map_syntax",
        {"ConvAbuse_dev.json": CONVABUSE, "p.json": '{"1": [0.5, 0.5]}'},
        ["evaluate", "ConvAbuse_dev.json", "--pred", "m=p.json", "--label-map=-3"],
        2,
        r"--label-map: expected comma-separated FROM:TO pairs",
    ),
    Case(
        # the truth's classes are 1, 2, 3: mapping onto 0 and 1 dropped the
        # counts and scored against the soft labels as if there were no map
        "lewidi_label_map_onto_other_classes",
        dict(LEWIDI, **{"p.tsv": EXACT_TSV}),
        LEV + ["m=p.tsv", "--label-map=1:0,2:0,3:1"],
        2,
        r"^hcal: error: --label-map: the target 0 \(1:0, 2:0\) is not a class of "
        r"t\.json \(its soft labels' classes are \[1, 2, 3\]\)",
    ),
    Case(
        # with predictions of the map's two classes it blamed the predictions
        "lewidi_label_map_onto_other_classes_two_columns",
        dict(LEWIDI, **{"p.tsv": "i1\t[0.75, 0.25]\ni2\t[0.25, 0.75]\n"}),
        LEV + ["m=p.tsv", "--label-map=1:0,2:0,3:1"],
        2,
        r"^hcal: error: --label-map: the target 0 \(1:0, 2:0\) is not a class",
    ),
    # ---- hcal lewidi: folders, seeds and folds ------------------------------ #
    Case(
        # was "no such file" for a folder that exists
        "lewidi_train_is_a_folder",
        {"p.json": LEWIDI["t.json"]},
        _lewidi_run(".", "p.json"),
        2,
        r"^hcal: error: \.: is a directory, expected a file\.$",
        "a folder for a file",
    ),
    Case(
        "lewidi_predict_is_a_folder",
        {"train.json": LEWIDI["t.json"]},
        _lewidi_run("train.json", "."),
        2,
        r"^hcal: error: --predict \.: is a directory, expected a file\.$",
        "a folder for a file",
    ),
    Case(
        # was refused by the estimator only once training had begun
        "lewidi_negative_seed",
        {"train.json": LEWIDI["t.json"]},
        _lewidi_run("train.json", "p.json", "--seed", "-1"),
        2,
        r"^hcal: error: argument --seed: expected a non-negative integer, got -1",
    ),
    Case(
        # no transformer to average would leave the ensemble its default model
        "lewidi_zero_transformer_seeds",
        {"train.json": LEWIDI["t.json"]},
        _lewidi_run(
            "train.json", "p.json", "--model", "ensemble", "--transformer-seeds", "0"
        ),
        2,
        r"^hcal: error: argument --transformer-seeds: must be at least 1, got '0'",
    ),
    Case(
        # was silently one fold per item: a fit per item, hours with a transformer
        "lewidi_more_folds_than_items",
        {
            "train.json": LEWIDI["t.json"],
            "p.json": _lewidi_2025({"j1": {"A1": "1", "A2": "2"}}),
        },
        _lewidi_run("train.json", "p.json", "--folds", "50"),
        2,
        r"^hcal: error: --folds 50: the training files hold 2 items .* at most 2",
    ),
    Case(
        "evaluate_lewidi_prediction_is_a_folder",
        LEWIDI,
        LEV + ["m=."],
        2,
        r"^hcal: error: \.: is a folder; pass one submission file of it\.$",
        "a folder for a file",
    ),
    Case(
        "varierrnli_nested_soft_pairs",
        {
            "VariErrNLI_dev.json": VEN,
            "p.tsv": "e1\t[[0.7, 0.3], [0.7, 0.3], [0.3, 0.7]]\n",
        },
        ["evaluate", "VariErrNLI_dev.json", "--format", "json", "--pred", "m=p.tsv"],
        0,
        r"^$",
        "nested soft layout",
        # shares 1/3, 1/3, 2/3: 2 |t - q| = 0.0667 per label
        stdout=r'"multilabel_manhattan_distance": 0\.0666666666666',
    ),
    Case(
        "varierrnli_soft_pair_not_a_distribution",
        {
            "VariErrNLI_dev.json": VEN,
            "p.tsv": "e1\t[[0.7, 0.5], [0.7, 0.3], [0.3, 0.7]]\n",
        },
        ["evaluate", "VariErrNLI_dev.json", "--pred", "m=p.tsv"],
        2,
        r"item 'e1', label 'contradiction': the pair \[0\.7, 0\.5\] sums to 1\.2",
    ),
    Case(
        # one entry per distinct annotator (A2 gave two labels and is listed
        # twice in "annotators"), each a list of labels
        "varierrnli_perspectivist_tsv",
        {
            "VariErrNLI_dev.json": VEN,
            "p.tsv": "e1\t[['neutral'], ['entailment', 'neutral'], ['neutral']]\n",
        },
        ["evaluate", "VariErrNLI_dev.json", "--format", "json", "--pred", "m=p.tsv"]
        + ["--track", "perspectivist"],
        0,
        r"^$",
        "VariErrNLI perspectivist TSV",
        # A3 predicted neutral for contradiction: 2 of 9 label decisions wrong
        stdout=r'"perspectivist_error_rate": 0\.2222222222222',
    ),
    Case(
        "demo_out_is_a_file",
        {"afile": "x"},
        ["demo", "--quick", "--out", "afile"],
        2,
        r"--out afile: exists and is not a folder",
    ),
]


def _write(tmp_path: Path, files: dict) -> None:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, np.ndarray):
            np.save(path, content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


NO_PROC = pytest.mark.skipif(
    not Path("/proc").is_dir(), reason="no /proc on this system"
)


def _params(cases) -> list:
    """The cases as pytest params; those writing under /proc need one."""
    return [
        pytest.param(
            c,
            id=c.id,
            marks=[NO_PROC] if any(str(a).startswith("/proc/") for a in c.argv) else [],
        )
        for c in cases
    ]


def _skip_unless_possible(case: Case) -> None:
    if case.argv[:1] == ["demo"]:
        pytest.importorskip("torch")
        pytest.importorskip("skorch")
    if "--plots" in case.argv and case.status == 0:
        pytest.importorskip("matplotlib")


def _check_stderr(case: Case, err: str) -> None:
    assert "Traceback" not in err, err
    if case.status == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and err.endswith("\n"), err
        assert lines[0].startswith("hcal: error: "), err
    else:
        assert all(line.startswith("hcal: ") for line in err.splitlines()), err
    assert re.search(case.stderr, err, flags=re.MULTILINE), err


def _check_stdout(case: Case, out: str) -> None:
    if case.status == 2:
        assert out == ""  # nothing printed before the error
    elif case.stdout:
        assert re.search(case.stdout, out), out


@pytest.mark.parametrize("case", _params(CASES))
def test_bad_input(case, tmp_path, monkeypatch, capsys):
    _skip_unless_possible(case)
    _write(tmp_path, case.files)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    status = main(case.argv)
    captured = capsys.readouterr()
    assert status == case.status, captured.err
    _check_stderr(case, captured.err)
    _check_stdout(case, captured.out)


def test_the_table_covers_every_kind_of_bad_input_it_was_built_for():
    sources = {c.source for c in CASES if c.source}
    assert sources >= {
        "crash on valid input",
        "fractional count",
        "random-bytes .npy",
        "1-D predictions",
        "unwritable --plots",
        "unwritable --out",
        "no subcommand",
        "rounded probabilities",
        "K mismatch",
        "ids",
        "empty files",
    }
    assert len({c.id for c in CASES}) == len(CASES)


# The real console script, for the cases where a traceback or the help text
# used to escape.
SUBPROCESS_CASES = [
    c
    for c in CASES
    if c.id
    in {
        "random_bytes_npy_predictions",
        "plots_folder_in_proc",
        "no_subcommand",
        "probabilities_off_advise_renormalize_not_logits",
        "renormalize_option_warns",
    }
]


@pytest.mark.parametrize("case", _params(SUBPROCESS_CASES))
def test_bad_input_console_script(case, tmp_path):
    assert HCAL.is_file(), f"console script not found at {HCAL}"
    _skip_unless_possible(case)
    _write(tmp_path, case.files)
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [str(HCAL), *case.argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == case.status, proc.stderr
    _check_stderr(case, proc.stderr)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="no /proc on this system")
def test_demo_checks_the_output_folder_before_training(tmp_path, capsys):
    # Progress lines ("training CNN epoch ...") go to standard error: the
    # error must be its only line, i.e. nothing was trained first.
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    assert main(["demo", "--quick", "--out", "/proc/hcal-x"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "hcal: error: --out /proc/hcal-x: cannot create the folder "
        "(No such file or directory)"
    ]


def test_run_demo_checks_the_output_folder_before_training(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from sklearn_hcal.cli._demo import run_demo

    (tmp_path / "afile").write_text("x")
    # progress=True would print "training CNN epoch" lines had it trained
    stream = io.StringIO()
    with pytest.raises(
        ValueError, match=r"out='.*afile/sub': cannot create the folder"
    ):
        run_demo(tmp_path / "afile" / "sub", quick=True, stream=stream)
    assert stream.getvalue() == ""

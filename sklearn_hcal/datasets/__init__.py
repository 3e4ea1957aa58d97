"""Data sets: synthetic histograms with a known truth, and real multi-annotator
data (ChaosNLI, CIFAR-10H)."""

from ._annotations import annotations_to_histograms
from ._base import get_data_home
from ._chaosnli import load_chaosnli
from ._cifar10h import load_cifar10h
from ._fetch import fetch_chaosnli
from ._lewidi import load_lewidi
from ._lewidi_fetch import fetch_lewidi
from ._lewidi_read import read_lewidi_submission
from ._lewidi_splits import combine_lewidi_splits
from ._lewidi_write import write_lewidi_submission
from ._mixed_digits import make_mixed_digits
from ._sampling import sample_annotations
from ._synthetic import make_label_histograms

__all__ = [
    "annotations_to_histograms",
    "combine_lewidi_splits",
    "fetch_chaosnli",
    "fetch_lewidi",
    "get_data_home",
    "load_chaosnli",
    "load_cifar10h",
    "load_lewidi",
    "make_label_histograms",
    "make_mixed_digits",
    "read_lewidi_submission",
    "sample_annotations",
    "write_lewidi_submission",
]

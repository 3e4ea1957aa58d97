"""Data sets: synthetic histograms with a known truth, and real multi-annotator
data (ChaosNLI, CIFAR-10H)."""

from ._base import get_data_home
from ._chaosnli import load_chaosnli
from ._synthetic import make_label_histograms

__all__ = ["get_data_home", "load_chaosnli", "make_label_histograms"]

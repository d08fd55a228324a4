"""Laugros's thesis (Université Grenoble Alpes 2022): the 16 synthetic corruptions of Figures 3.2 and 4.3 and
Tables 3.2-3.3."""

from . import benchmark, corruptions
from .benchmark import SELECTIONS
from .corruptions import FAMILY, NAMES

__all__ = ["FAMILY", "NAMES", "SELECTIONS", "benchmark", "corruptions"]

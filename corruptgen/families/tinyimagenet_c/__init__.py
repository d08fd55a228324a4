"""Tiny-ImageNet-C: ImageNet-C's corruptions with the 64 px constants of ``make_tinyimagenet_c.py`` (registers
``tinyimagenet_c/<name>``, the ``tinyimagenet-c`` family and export layout)."""

from . import benchmark, export  # noqa: F401
from .tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES

__all__ = ["DOMAINS", "FROST_RESIZE", "IMSIZE", "TABLES"]

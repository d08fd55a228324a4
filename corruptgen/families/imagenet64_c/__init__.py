"""ImageNet-64×64-C: ImageNet-C's corruptions with the 64 px constants of ``make_imagenet_64_c.py`` (registers
``imagenet64_c/<name>`` and the ``imagenet64-c`` family)."""

from ..tinyimagenet_c.tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES
from . import benchmark  # noqa: F401

__all__ = ["DOMAINS", "FROST_RESIZE", "IMSIZE", "TABLES"]

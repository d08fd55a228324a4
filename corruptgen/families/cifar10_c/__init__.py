"""CIFAR-10-C: ImageNet-C's corruptions with the 32 px constants of ``make_cifar_c.py`` (registers ``cifar10_c/<name>``
and the ``cifar10-c`` family), the ``cifar-c`` export layout and the ``c_reference`` metric family."""

from . import benchmark  # noqa: F401
from .tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES

__all__ = ["DOMAINS", "FROST_RESIZE", "IMSIZE", "TABLES"]

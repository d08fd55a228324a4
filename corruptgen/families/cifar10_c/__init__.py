"""CIFAR-10-C: ImageNet-C's corruptions with the 32 px constants of ``make_cifar_c.py`` (registers ``cifar10_c/<name>``
and the ``cifar10-c`` family) and the ``cifar-c`` export layout; its builds are evaluated with the ``c_reference``
metric family (CE/mCE against a ``--reference`` results file)."""

from . import benchmark, export  # noqa: F401
from .tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES

__all__ = ["DOMAINS", "FROST_RESIZE", "IMSIZE", "TABLES"]

"""CIFAR-100-C: the corruptions and constants of CIFAR-10-C (the same ``make_cifar_c.py``) on CIFAR-100 images."""

from . import benchmark  # noqa: F401

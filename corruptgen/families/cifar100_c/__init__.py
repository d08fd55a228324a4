"""CIFAR-100-C: CIFAR-10-C's constants (the same ``make_cifar_c.py``) registered as ``cifar100_c/<name>``, and the
``cifar100-c`` family."""

from . import benchmark  # noqa: F401

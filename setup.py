"""Packages: every ``corruptgen*`` package, plus the repository's top-level ``kernels/`` and ``cards/`` folders shipped
inside the wheel as ``corruptgen.kernels`` and ``corruptgen.cards`` (read with ``importlib.resources``)."""

from setuptools import find_packages, setup

DATA = {"corruptgen.kernels": "kernels", "corruptgen.cards": "cards"}

setup(
    packages=[*find_packages(include=["corruptgen", "corruptgen.*"]), *DATA],
    package_dir=DATA,
    package_data={
        "corruptgen.kernels": ["*.npz", "*.json"],
        "corruptgen.cards": ["*.md"],
        "corruptgen.gallery": ["static/*"],
    },
)

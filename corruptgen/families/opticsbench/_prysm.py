"""Importing prysm quietly, with one clear error when it is missing."""

from __future__ import annotations

import importlib
import warnings

#: The prysm release the kernels are generated and validated with (the last one on PyPI).
PRYSM_VERSION = "0.21.1"


def prysm_module(name: str):
    """Import ``prysm.<name>`` (prysm 0.21.1 imports the deprecated ``pkg_resources``; its warning is silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module(f"prysm.{name}")
        except ImportError as exc:  # pragma: no cover - depends on the environment
            from ...errors import CorruptgenError

            raise CorruptgenError(
                f"PSF generation needs prysm=={PRYSM_VERSION} and setuptools<81 ({exc}); "
                f'run: pip install prysm=={PRYSM_VERSION} "setuptools<81"'
            ) from None


def prysm_version() -> str:
    """Installed prysm version string."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import prysm

    return str(prysm.__version__)

"""Fixtures for the evaluation tests (helpers in eval_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from eval_helpers import PHOTOS, photo, write_build


@pytest.fixture(scope="session")
def photos() -> dict[str, np.ndarray]:
    return {name: photo(name) for name, _ in PHOTOS}


@pytest.fixture
def make_build(tmp_path: Path) -> Callable[..., Path]:
    def make(name: str, subsets: dict, **kw) -> Path:
        return write_build(tmp_path / name, name, subsets, **kw)

    return make


@pytest.fixture(autouse=True, scope="session")
def _datasets_cache(tmp_path_factory):
    """Keep the `datasets` cache (Arrow files, lock files) of these tests out of the user's home."""
    import datasets

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("hf-datasets"))
        yield

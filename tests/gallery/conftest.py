"""Small real builds of the sample photos, made once per session (the readers are in site_reading.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import corruptgen


@pytest.fixture(scope="session")
def icb(tmp_path_factory) -> Path:
    """ImageNet-C, gaussian noise and frost at severities 1 and 3, two photos at 64 px (plus clean)."""
    out = tmp_path_factory.mktemp("icb")
    corruptgen.build("imagenet-c", out=out, subsets="gaussian_noise,frost", severities="1,3", limit=2, size=64,
                     progress=False)  # fmt: skip
    return out / "imagenet-c"

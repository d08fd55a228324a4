"""Builds shared by the export tests: a fresh ImageNet-C build of the sample photos (2 corruptions x 2 severities)."""

from __future__ import annotations

from pathlib import Path

import pytest

import corruptgen


@pytest.fixture(scope="session")
def icb(tmp_path_factory) -> Path:
    """imagenet-c: gaussian_noise and contrast at severities 1, 2 (+ clean) over the first 6 sample photos
    (4 labelled, 2 unlabelled)."""
    out = tmp_path_factory.mktemp("icb")
    return corruptgen.build("imagenet-c", subsets="gaussian_noise,contrast", severities="1,2", out=out, limit=6).out_dir

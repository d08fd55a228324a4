"""Fidelity of CIFAR-10-C (32 px), Tiny-ImageNet-C and ImageNet-64×64-C (64 px) to their reference scripts.

Per corruption × severity, on real photographs downsized to 32×32 / 64×64 and with the randomness fixed (one seeded
Generator making the scripts' calls in their order, glass-blur shifts drawn in one batch), each registered corruption
is compared with the transcription in ``small_c_reference.py``: the mean absolute change of the image is within ±20 %
of the transcription's, and the output is bit-identical (every corruption is deterministic given its draws).
"""

from __future__ import annotations

import numpy as np
import pytest
import small_c_reference as ref
from small_images import photos

from corruptgen.corruptions import get
from corruptgen.errors import CorruptgenError
from corruptgen.families.imagenet_c import TABLES, frost_dir

FAMILIES = (("cifar10_c", 32), ("cifar100_c", 32), ("tinyimagenet_c", 64), ("imagenet64_c", 64))
IMAGES = {32: photos(32, ("astronaut", "chelsea", "coffee")), 64: photos(64, ("astronaut", "chelsea", "coffee"))}


def _frost_installed() -> bool:
    try:
        frost_dir()
    except CorruptgenError:
        return False
    return True


needs_frost = pytest.mark.skipif(not _frost_installed(), reason="pip install --no-deps imagecorruptions==1.1.2")


def _mean_change(out: np.ndarray, image: np.ndarray) -> float:
    return float(np.abs(out.astype(np.int16) - image).mean())


@pytest.mark.parametrize(
    ("family", "size", "name"),
    [
        pytest.param(f, size, n, marks=[needs_frost] if n == "frost" else [], id=f"{f}-{n}")
        for f, size in FAMILIES
        for n in TABLES
    ],
)
def test_matches_the_reference_script(family: str, size: int, name: str) -> None:
    corruption = get(f"{family}/{name}")
    for severity in range(1, 6):
        ours_change, ref_change = [], []
        for k, image in enumerate(IMAGES[size]):
            seed = 1000 * severity + k
            ours, _ = corruption.fn(image, np.random.default_rng(seed), severity=severity)
            theirs = ref.corrupt(name, image, np.random.default_rng(seed), severity)
            assert np.array_equal(ours, theirs), f"{name} s{severity} image {k}"
            ours_change.append(_mean_change(ours, image))
            ref_change.append(_mean_change(theirs, image))
        a, b = np.mean(ours_change), np.mean(ref_change)
        assert abs(a - b) <= 0.2 * b + 1e-9, f"{name} s{severity}: mean change {a:.3f} vs reference {b:.3f}"


def test_severities_grow_on_average() -> None:
    """Sanity of the tables: severity 5 changes the 32 px photos more than severity 1, for every corruption but the
    elastic transform (the script's severity 1 is a pure affine jitter of ±2.56 px, larger than severity 5's ±0.96)."""
    for name in TABLES:
        if name == "elastic_transform" or (name == "frost" and not _frost_installed()):
            continue
        change = [
            np.mean([_mean_change(get(f"cifar10_c/{name}").fn(im, np.random.default_rng(k), severity=s)[0], im)
                     for k, im in enumerate(IMAGES[32])])
            for s in (1, 5)
        ]  # fmt: skip
        assert change[1] > change[0], name

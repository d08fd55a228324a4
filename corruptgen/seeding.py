"""Per-sample seeding: a sample's randomness depends only on (global seed, benchmark, subset, source key)."""

from __future__ import annotations

import hashlib

import numpy as np


def sample_seed(seed: int, benchmark: str, subset: str, key: str) -> int:
    """63-bit seed from the sample identity (fits a signed int64 column in Arrow/JSON)."""
    text = "\x1f".join((str(int(seed)), benchmark, subset, key))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def sample_rng(seed: int, benchmark: str, subset: str, key: str) -> tuple[int, np.random.Generator]:
    """The sample's seed and a fresh PCG64 generator seeded from it."""
    s = sample_seed(seed, benchmark, subset, key)
    return s, np.random.default_rng(s)

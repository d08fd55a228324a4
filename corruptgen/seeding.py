"""Per-sample seeding: a sample's randomness depends only on (global seed, benchmark, subset, source key); an
augmentation call's only on (seed, epoch, key) or (seed, epoch, DataLoader worker, call number)."""

from __future__ import annotations

import hashlib
import secrets
import sys
from collections.abc import Callable
from typing import Any

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


def worker_id() -> int:
    """0 in the main process, 1 + the DataLoader worker's id inside a worker (torch is only looked at if loaded)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return 0
    info = torch.utils.data.get_worker_info()
    return 0 if info is None else info.id + 1


def call_rng(seed: int, epoch: int, calls: int, key: Any = None) -> np.random.Generator:
    """The generator of one augmentation call: from (seed, epoch, key) when a key is given, else from (seed, epoch,
    DataLoader worker, ``calls``, the caller's count of its calls), so runs repeat and workers do not repeat each
    other."""
    if key is None:
        entropy = [seed, epoch, worker_id(), calls]
    else:
        digest = hashlib.sha256(str(key).encode("utf-8")).digest()
        entropy = [seed, epoch, 2**32, int.from_bytes(digest[:8], "little")]
    return np.random.default_rng(np.random.SeedSequence(entropy))


class SeededCalls:
    """Base of the augmentations: a base seed (``None``: fresh entropy), an epoch (:meth:`set_epoch` for fresh draws
    every epoch) and the generator of each call (:func:`call_rng`)."""

    def __init__(self, seed: int | None) -> None:
        self.seed = int(seed) if seed is not None else secrets.randbits(63)
        self.epoch = 0
        self._calls = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _generator(self, key: Any = None) -> np.random.Generator:
        return self._generator_later(key)()

    def _generator_later(self, key: Any = None) -> Callable[[], np.random.Generator]:
        """This call's :meth:`_generator`, made when called (the call is counted now): seeding one costs more than
        some corruptions, and a call that draws nothing need not."""
        if key is None:
            self._calls += 1
        seed, epoch, calls = self.seed, self.epoch, self._calls
        return lambda: call_rng(seed, epoch, calls, key)

"""``torch_loader`` under DDP: every rank gets the same number of batches (pad or drop), with or without workers;
batches are full where the data allow and ``len(loader)`` does not depend on the workers (the README example)."""

from __future__ import annotations

import os
from collections import Counter

import pytest

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.hub import torch_loader
from corruptgen.hub.stream import START_METHOD, pieces, share


@pytest.fixture(scope="module")
def odd_build(tmp_path_factory):
    """9 solarize samples in shards of 4, 4 and 1: an odd count in unequal shards."""
    out = tmp_path_factory.mktemp("odd")
    return corruptgen.build("syn2nat", out=out, subsets="solarize", limit=9, shard_size=4).out_dir


def _per_rank(build, monkeypatch, via_env: bool, **kw):
    """(batches, metas) of ranks 0 and 1 of a simulated world of 2."""
    out = []
    for rank in (0, 1):
        if via_env:
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", "2")
            loader = torch_loader(build, subsets=["solarize"], decode="raw", **kw)
        else:
            loader = torch_loader(build, subsets=["solarize"], decode="raw", rank=rank, world_size=2, **kw)
        batches = list(loader)
        assert len(batches) == len(loader)  # len() is the exact batch count of this rank
        out.append((len(batches), [m for _, _, metas in batches for m in metas]))
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_ranks_get_equal_batches_padding_marked(odd_build, monkeypatch, workers):
    (n0, m0), (n1, m1) = _per_rank(odd_build, monkeypatch, via_env=True, batch_size=2, num_workers=workers)
    assert n0 == n1 and len(m0) == len(m1) == 5  # ceil(9 / 2) samples per rank
    real = [m["key"] for m in m0 + m1 if not m.get("padding")]
    assert sorted(real) == sorted(set(real)) and len(real) == 9  # every sample once
    padded = [m for m in m0 + m1 if m.get("padding")]
    assert len(padded) == 1 and padded[0]["key"] in real  # a repeated sample, marked


@pytest.mark.parametrize("workers", [0, 2])
def test_drop_leaves_the_remainder_out(odd_build, monkeypatch, workers):
    (n0, m0), (n1, m1) = _per_rank(odd_build, monkeypatch, via_env=False, batch_size=2, num_workers=workers,
                                   balance="drop")  # fmt: skip
    assert n0 == n1 and len(m0) == len(m1) == 4
    keys = Counter(m["key"] for m in m0 + m1)
    assert len(keys) == 8 and set(keys.values()) == {1} and not any(m.get("padding") for m in m0 + m1)


def _no_fork():
    raise AssertionError("the DataLoader forked this (multi-threaded) process")


@pytest.mark.loader_default
def test_one_process_reads_everything_once_in_workers_started_without_fork(odd_build, monkeypatch):
    monkeypatch.setattr(os, "fork", _no_fork)  # what a "fork" start would call, here, in the test process
    loader = torch_loader(odd_build, subsets=["solarize"], batch_size=4, num_workers=2, decode="raw")
    metas = [m for _, _, ms in loader for m in ms]
    assert len(metas) == 9 == loader.num_samples == loader.rank_samples and not any("padding" in m for m in metas)
    assert loader.multiprocessing_context.get_start_method() == START_METHOD == "spawn"


def test_a_start_method_the_caller_chose_is_kept(odd_build):
    loader = torch_loader(odd_build, subsets=["solarize"], num_workers=1, multiprocessing_context="forkserver")
    assert loader.multiprocessing_context.get_start_method() == "forkserver"
    assert torch_loader(odd_build, subsets=["solarize"]).multiprocessing_context is None  # no workers


@pytest.mark.parametrize(("workers", "batch_size"), [(0, 2), (2, 4), (3, 2)])
def test_batches_are_full_and_len_does_not_depend_on_workers(odd_build, workers, batch_size):
    loader = torch_loader(odd_build, subsets=["solarize"], batch_size=batch_size, num_workers=workers, decode="raw")
    sizes = sorted((len(metas) for _, _, metas in loader), reverse=True)
    assert sizes == [batch_size] * (9 // batch_size) + [1] and len(loader) == len(sizes)
    assert loader.rank_samples == loader.num_samples == 9


def test_split_helpers():
    assert share(9, 2, "pad") == [5, 5] and share(9, 2, "drop") == [4, 4] and share(5, 2, "split") == [3, 2]
    # positions 5..9 of shards (4, 4, 1): the end of shard 1, shard 2, then position 9 wraps to the first sample
    assert list(pieces([4, 4, 1], 5, 10)) == [(1, 1, 3, False), (2, 0, 1, False), (0, 0, 1, True)]
    with pytest.raises(CorruptgenError, match="balance"):
        torch_loader("unused", balance="even")

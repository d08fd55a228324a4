"""``torch_loader`` on an ImageNet-P build with its clean subset: an image is never batched with a sequence, and
ranks still get equal batch counts (full batches and ``len(loader)``: test_torch_loader_ranks.py)."""

from __future__ import annotations

import pytest

import corruptgen
from corruptgen.hub import torch_loader


@pytest.fixture(scope="module")
def sequences(tmp_path_factory):
    """ImageNet-P, 2 inputs: clean images, translate (41 frames) and gaussian_noise (31 frames) sequences."""
    out = tmp_path_factory.mktemp("ip")
    return corruptgen.build("imagenet-p", out=out, subsets="translate,gaussian_noise", limit=2).out_dir


@pytest.mark.parametrize("workers", [0, 2])
def test_images_and_sequences_are_never_batched_together(sequences, workers):
    loader = torch_loader(sequences, batch_size=3, num_workers=workers)  # the default subsets: clean + sequences
    batches = list(loader)
    assert len(batches) == len(loader) == 3
    shapes = sorted(tuple(images.shape) for images, _, _ in batches)
    assert shapes == [(2, 3, 224, 224), (2, 31, 3, 224, 224), (2, 41, 3, 224, 224)]
    for _, _, metas in batches:
        assert len({m["subset"] for m in metas}) == 1


@pytest.mark.parametrize("workers", [0, 2])
def test_ranks_get_equal_batches_of_one_kind(sequences, workers):
    per_rank = []
    for rank in (0, 1):
        loader = torch_loader(sequences, batch_size=4, num_workers=workers, decode="raw", rank=rank, world_size=2)
        batches = list(loader)
        assert len(batches) == len(loader) == 3
        per_rank.append([(m["subset"], m["key"]) for _, _, metas in batches for m in metas])
    everything = [(m["subset"], m["key"]) for _, _, metas in torch_loader(sequences, decode="raw") for m in metas]
    assert len(everything) == 6 and sorted(per_rank[0] + per_rank[1]) == sorted(everything)  # 2 per group: no padding

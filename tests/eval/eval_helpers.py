"""Helpers for the evaluation tests: tiny builds written as WebDataset tars (sample JSON as the engine writes it), so
the tests do not depend on the families that are not there yet, and a fast fake model."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import skimage.data
import torch

from corruptgen.family.preprocess import get_preprocess
from corruptgen.io.codec import dump_json, encode_image
from corruptgen.io.labels import imagenet_names
from corruptgen.io.shards import ShardWriter
from corruptgen.models import EvalModel

#: (photo, label) pairs: real photographs with an ImageNet-1k label (cat, espresso, missile, analog clock, scooter).
PHOTOS = (("chelsea", 285), ("coffee", 967), ("rocket", 657), ("clock", 409), ("astronaut", None),
          ("stereo_motorcycle", 670))  # fmt: skip


def photo(name: str, size: int = 224) -> np.ndarray:
    """A real photograph, Syn2Nat-preprocessed to size² RGB uint8."""
    data = getattr(skimage.data, name)()
    data = data[0] if isinstance(data, tuple) else data
    if data.ndim == 2:
        data = np.repeat(data[..., None], 3, axis=2)
    return get_preprocess("syn2nat").scaled(size)(np.ascontiguousarray(data[..., :3]))


def sample_meta(benchmark: str, subset: str, key: str, label: int | None, **extra: Any) -> dict[str, Any]:
    """Sample JSON with the fields the engine writes (labels are ImageNet-1k classes, named as the engine does)."""
    name = None if label is None else imagenet_names()[label]
    meta = {"key": key, "source_key": key, "repeat": 0, "source_id": f"test:{key}", "label": label,
            "label_name": name, "benchmark": benchmark, "subset": subset, "corruption": None, "category": None,
            "severity": None, "params": {}, "seed": 0, "preprocessing": {"name": "test"}, "versions": {}}  # fmt: skip
    meta.update(extra)
    return meta


def write_build(
    root: Path,
    benchmark: str,
    subsets: dict[str, list[tuple[str, np.ndarray, dict[str, Any]]]],
    *,
    manifest: bool = True,
    labelled: bool = True,
    shard_size: int = 1000,
) -> Path:
    """Write ``root/data/<subset>/test-NNNNN.tar`` (+ manifest.json); each sample is (key, image or TxHxWx3 frames,
    meta). Returns ``root``."""
    shards: dict[str, dict] = {}
    info: dict[str, dict] = {}
    for subset, samples in subsets.items():
        for chunk in range(0, max(len(samples), 1), shard_size):
            rel = f"data/{subset}/test-{chunk // shard_size:05d}.tar"
            w = ShardWriter(root / rel)
            for key, image, meta in samples[chunk : chunk + shard_size]:
                fields = {}
                if image.ndim == 4:
                    meta = {**meta, "frames": len(image)}
                    for t, frame in enumerate(image):
                        fields[f"{t:03d}.jpg"] = encode_image(frame, "jpg", 90)
                else:
                    fields["jpg"] = encode_image(image, "jpg", 90)
                fields["json"] = dump_json(meta)
                if labelled:
                    label = meta.get("label")
                    fields["cls"] = str(-1 if label is None else label).encode()
                w.add(key, fields)
            shards[rel] = {**w.commit(), "subset": subset, "chunk": chunk // shard_size}
        first = samples[0][2] if samples else {}
        info[subset] = {"corruption": first.get("corruption"), "severity": first.get("severity"),
                        "category": first.get("category"), "samples": len(samples),
                        "shards": sorted(r for r, v in shards.items() if v["subset"] == subset)}  # fmt: skip
    if manifest:
        (root / "manifest.json").write_text(json.dumps({
            "corruptgen_manifest": 1, "benchmark": benchmark, "plan_id": f"test-{benchmark}", "complete": True,
            "subsets": info, "shards": shards, "versions": {}}, indent=1))  # fmt: skip
    return root


def noise(image: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (np.clip(image / 255.0 + rng.normal(0, sigma, image.shape), 0, 1) * 255).round().astype(np.uint8)


class MeanColourNet(torch.nn.Module):
    """A fast deterministic 'classifier' for plumbing tests: logits from the mean and spread of the input."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        w = torch.linspace(-1, 1, 12 * num_classes).reshape(12, num_classes)
        self.register_buffer("w", torch.sin(w * 37.0) * 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.mean(dim=(2, 3))
        s = x.std(dim=(2, 3))
        feats = torch.cat([m, s, m * s, m.square()], dim=1)  # (N, 12)
        return feats @ self.w


def fake_model(num_classes: int = 1000, name: str = "fake") -> EvalModel:
    net = MeanColourNet(num_classes)
    return EvalModel(name=name, spec="test:fake", forward=net, module=net, mean=(0.5,) * 3, std=(0.5,) * 3,
                     num_classes=num_classes)  # fmt: skip


def classify_samples(
    photos: dict[str, np.ndarray],
    benchmark: str,
    subset: str,
    fn: Callable | None = None,
    names: Sequence[str] | None = None,
    **meta: Any,
) -> list[tuple[str, np.ndarray, dict]]:
    """One sample per photo, corrupted by ``fn(image, i)``."""
    out = []
    for i, (name, label) in enumerate(PHOTOS):
        if names is not None and name not in names:
            continue
        img = photos[name] if fn is None else fn(photos[name], i)
        out.append((name, img, sample_meta(benchmark, subset, name, label, **meta)))
    return out

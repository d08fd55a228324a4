"""Reading builds back: ``load`` (a `datasets` Dataset per subset) and ``torch_loader`` (a webdataset DataLoader,
:mod:`corruptgen.hub.stream`).

``load`` works on a local build directory or a Hub repository. ``torch_loader`` streams the tar shards of a build
(a local directory, a Hub repository or any fsspec URL) with the same number of batches on every rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..io.storage import hub_dataset
from .card import README, Build, card_marker
from .card_scan import class_names, record_label
from .features import scan_subset
from .stream import DECODES, _unknown_subset, torch_loader

__all__ = ["DECODES", "load", "torch_loader"]


def _card_configs(root: Path) -> set[str]:
    from huggingface_hub import metadata_load

    meta = metadata_load(root / README) or {}
    return {c.get("config_name") for c in meta.get("configs") or [] if isinstance(c, dict)}


def load(
    path_or_repo: str | Path,
    subset: str | None = None,
    split: str | None = None,
    streaming: bool = False,
    **kwargs: Any,
):
    """One subset of a build as a ``datasets.Dataset`` (or ``IterableDataset`` with ``streaming=True``).

    Args:
        path_or_repo: a local build directory (``<out>/<benchmark>``) or a Hub dataset repository
            (``hf:user/name[@revision]``; a bare ``user/name`` is a local path).
        subset: the subset (= Hub config), e.g. ``"solarize"`` or ``"gaussian_noise_s3"``; default: the card's default.
        split: the split (default: the build's, ``test``); a Hub repository with several splits and ``split=None``
            gives a ``DatasetDict``.
        streaming: stream the shards instead of preparing an Arrow cache.
        kwargs: passed to ``datasets.load_dataset`` (``revision``, ``cache_dir``, ``token``, ...).

    A local directory whose README.md was written (by the build or ``corruptgen card``) for this very manifest is
    loaded through the card (declared features, one config per subset); otherwise the subset's shards are read
    directly with features inferred from its samples (``cls`` with the same class names as a card gives).
    """
    import datasets

    from ..io.storage import require_local

    hub = hub_dataset(path_or_repo)
    if hub is None:
        require_local(path_or_repo, "corruptgen.load", "; corruptgen.torch_loader streams shards from any fsspec URL")
        local = Path(path_or_repo)
        build = Build.open(local)
        configs = build.configs()
        if not configs:
            raise CorruptgenError(f"{local}: the build has no samples")
        if subset is None:
            subset = build.default_config()
        if subset not in configs:
            raise _unknown_subset(subset, configs, str(local))
        split = split or build.split
        marker = card_marker(local)
        if marker and marker["manifest_sha256"] == build.manifest_sha256() and subset in _card_configs(local):
            return datasets.load_dataset(str(local), name=subset, split=split, streaming=streaming, **kwargs)
        shards = [str((local / rel).resolve()) for rel in build.shards(subset)]
        labels: dict[int, str | None] = {}
        schema = scan_subset(shards, on_meta=lambda meta: record_label(meta, labels))
        features = schema.features(class_names=class_names(build.manifest.get("source") or {}, labels))
        return datasets.load_dataset("webdataset", data_files={split: shards}, split=split, streaming=streaming,
                                     features=features, **kwargs)  # fmt: skip
    if hub[1] is not None:
        kwargs.setdefault("revision", hub[1])
    try:
        ds = datasets.load_dataset(hub[0], name=subset, split=split, streaming=streaming, **kwargs)
    except datasets.exceptions.DatasetNotFoundError as e:
        raise CorruptgenError(f"{path_or_repo}: no such Hub dataset (or no access): {e}") from None
    if split is None and isinstance(ds, (datasets.DatasetDict, datasets.IterableDatasetDict)) and len(ds) == 1:
        return next(iter(ds.values()))
    return ds

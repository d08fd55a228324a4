"""YAML metadata of a dataset card: licence and gating, the per-config scan, and the Hub/`datasets` metadata.

The licence is inherited from the source (the gated ImageNet terms pattern for ImageNet-derived data, spec
hub_and_scale.md §1.2–1.6); :func:`scan_build` reads every config's shards for the declared ``dataset_info``
features (see :mod:`corruptgen.hub.features`), Δv values and recorded checksums; :func:`build_metadata` assembles
one config per subset with ``data_files`` pointing at ``data/<subset>/<split>-*.tar``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import CorruptgenError
from ..reader import Build
from .features import SubsetSchema, scan_subset

#: Sample-json ``params`` keys that hold the measured perceived change Δv (Shen et al., VCR: Δv = max(0, 1 − VIF)).
DELTA_V_KEYS = ("delta_v", "dv", "vd_score")

SKIMAGE_DATA_URL = "https://scikit-image.org/docs/stable/api/skimage.data.html"
IMAGENET_TERMS_URL = "https://image-net.org/download.php"
IMAGENET_GATED_PROMPT = (
    "This dataset is derived from the ImageNet database. By accessing it you agree to the ImageNet Terms of Access "
    f"({IMAGENET_TERMS_URL}): use the images only for non-commercial research and educational purposes, and accept "
    "full responsibility for your use of them."
)

_SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))  # fmt: skip


# ------------------------------------------------------------------------------------------------------- licence


@dataclass
class Licence:
    """Card licence fields and the sentences that explain them."""

    yaml: dict[str, Any]
    text: str
    source: str  # "imagenet", "skimage", "user" or "unknown"


def source_kind(source: dict[str, Any]) -> str:
    """``skimage`` for the bundled samples, ``imagenet`` for ImageNet-derived sources, else ``unknown``."""
    if source.get("kind") == "samples":
        return "skimage"
    if source.get("layout") in ("imagenet-wnid", "imagenet-val"):
        return "imagenet"
    text = " ".join(str(source.get(k) or "") for k in ("spec", "name", "path", "pattern")).lower()
    return "imagenet" if ("imagenet" in text or "ilsvrc" in text) else "unknown"


def licence_for(
    manifest: dict[str, Any], *, license: str | None = None, license_name: str | None = None,
    license_link: str | None = None,
) -> Licence:  # fmt: skip
    """Licence metadata inherited from the source; ``license`` (a Hub licence id) states it explicitly."""
    kind = source_kind(manifest.get("source") or {})
    yaml: dict[str, Any] = {}
    parts: list[str] = []
    if kind == "imagenet":
        yaml = {
            "license": "other",
            "license_name": "imagenet-terms-of-access",
            "license_link": IMAGENET_TERMS_URL,
            "extra_gated_prompt": IMAGENET_GATED_PROMPT,
            "extra_gated_fields": {"I agree to use this dataset for non-commercial research only": "checkbox"},
        }
        parts.append(
            "The images are derived from the ImageNet database and inherit the [ImageNet Terms of Access]"
            f"({IMAGENET_TERMS_URL}) (non-commercial research and educational use only). Access to this repository "
            "is gated on accepting those terms."
        )
    elif kind == "skimage":
        yaml = {"license": "bsd-3-clause"}
        parts.append(
            "Rendered from the sample photographs bundled with scikit-image (BSD-3-Clause, with per-image "
            f"public-domain or permissive credits): see the scikit-image data licences ({SKIMAGE_DATA_URL})."
        )
    else:
        yaml = {"license": "other"}
        parts.append(
            "The licence of the source images was not stated: the publisher must state it (`corruptgen card DIR "
            "--license <id>`, e.g. `cc-by-4.0`). Corrupted images are derivatives of their sources and inherit "
            "their terms."
        )
    if license:
        yaml.update({"license": license})
        for key in ("license_name", "license_link"):
            yaml.pop(key, None)
        if license_name:
            yaml["license_name"] = license_name
        if license_link:
            yaml["license_link"] = license_link
        stated = f"`{license}`" + (f" ({license_name})" if license_name else "")
        parts.append(f"The publisher states the licence of the source images as {stated}.")
        kind = kind if kind == "imagenet" else "user"
    return Licence(yaml, " ".join(parts), kind)


# ------------------------------------------------------------------------------------------------------- scanning


@dataclass
class ScanResult:
    schemas: dict[str, SubsetSchema]
    delta_v: dict[str, list[float]]
    hashes: dict[str, set[str]]
    labels: dict[int, str | None] = field(default_factory=dict)  # class index -> name, as the samples record them


def _walk_hashes(obj: Any, prefix: str, out: dict[str, set[str]], depth: int = 0) -> None:
    """Collect string values under keys containing ``sha256`` (e.g. a kernel stack checksum)."""
    if depth > 4:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if "sha256" in str(k).lower() and isinstance(v, str):
                out.setdefault(path, set()).add(v)
            else:
                _walk_hashes(v, path, out, depth + 1)


def scan_build(build: Build, *, limit: int | None = None, progress: bool = False) -> ScanResult:
    """Scan every config's shards: feature schema, Δv values (if any), checksums recorded in the samples."""
    from tqdm.auto import tqdm

    schemas, delta_v, hashes, labels = {}, {}, {}, {}
    for name in tqdm(build.configs(), desc="scanning subsets", unit="subset", disable=not progress):
        values: list[float] = []

        def on_meta(meta: dict, values=values) -> None:
            record_label(meta, labels)
            params = meta.get("params")
            if isinstance(params, dict):
                for key in DELTA_V_KEYS:
                    v = params.get(key)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        values.append(float(v))
                        break
                if len(hashes) < 16:
                    _walk_hashes(params, "params", hashes)

        schemas[name] = scan_subset((build.shard_ref(r) for r in build.shards(name)), limit=limit, on_meta=on_meta)
        if values:
            delta_v[name] = values
    return ScanResult(schemas, delta_v, hashes, labels)


def record_label(meta: dict, labels: dict[int, str | None]) -> None:
    """Note a sample json's class index and name in ``labels`` (index -> name)."""
    label = meta.get("label")
    if isinstance(label, int) and not isinstance(label, bool) and label >= 0:
        labels[label] = labels.get(label) or meta.get("label_name")


def class_names(build: Build, scan: ScanResult) -> list[str] | None:
    """Names of the class indices in ``.cls`` (for a ``ClassLabel``), or None for unlabelled builds.

    ImageNet-derived sources and the bundled photos (ImageNet indices) get the 1000 ImageNet class names; any other
    labelled source gets the names its samples record (``class_<i>`` for an index no scanned sample names).
    """
    from ..io.labels import imagenet_names, imagenet_wnids

    source = build.manifest.get("source") or {}
    if not scan.labels and not source.get("labelled"):
        return None
    imagenet = imagenet_names()
    looks_imagenet = all(i < len(imagenet) and n in (None, imagenet[i]) for i, n in scan.labels.items())
    if source_kind(source) in ("imagenet", "skimage") or (scan.labels and looks_imagenet):
        return _unique(imagenet, imagenet_wnids())
    count = max([int(source.get("num_classes") or 0), *(i + 1 for i in scan.labels)])
    names = [scan.labels.get(i) or f"class_{i}" for i in range(count)]
    return _unique(names, [str(i) for i in range(count)]) or None


def _unique(names: list[str], ids: list[str]) -> list[str]:
    """Names made unique for a ``ClassLabel``: a name shared by several classes gets its id appended (ImageNet has
    two ``missile`` and two ``sunglasses`` classes: ``missile (n03773504)``, ``missile (n04008634)``)."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [f"{name} ({ident})" if seen[name] > 1 else name for name, ident in zip(names, ids, strict=True)]


def source_datasets(manifest: dict[str, Any]) -> list[str]:
    """The card's ``source_datasets``: ``extended|imagenet-1k`` for ImageNet-derived data, else ``extended``."""
    return ["extended|imagenet-1k"] if source_kind(manifest.get("source") or {}) == "imagenet" else ["extended"]


# ------------------------------------------------------------------------------------------------------- metadata


def size_category(n: int) -> str:
    for bound, label in _SIZE_CATEGORIES:
        if n < bound:
            return label
    return "n>1B"


def _title(build: Build) -> str:
    try:
        from ..family import get_benchmark

        return get_benchmark(build.benchmark).title
    except Exception:
        return build.benchmark


def build_metadata(
    build: Build, scan: ScanResult, licence: Licence, *, pretty_name: str | None = None, arxiv: list[str] = ()
) -> dict:
    """The card's YAML metadata (a plain dict, in the order the Hub documents it); ``arxiv`` ids become
    ``arxiv:<id>`` tags, which the Hub links to the paper pages."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    configs = build.configs()
    if not configs:
        raise CorruptgenError(f"{build.location}: the build has no samples; nothing to describe")
    split = build.split
    default = build.default_config()
    total = sum(build.samples(n) for n in configs)
    tags = ["webdataset", "corruptgen", "robustness", "image-corruptions", build.benchmark]
    tags += [f"arxiv:{i}" for i in arxiv]
    card_data = DatasetCardData(
        pretty_name=pretty_name or f"{_title(build)} (corruptgen render)",
        task_categories=["image-classification"],
        task_ids=["multi-class-image-classification"],
        size_categories=[size_category(total)],
        source_datasets=source_datasets(build.manifest),
        tags=list(dict.fromkeys(tags)),
        **licence.yaml,
    )
    names = class_names(build, scan)
    meta_configs = {}
    infos = {}
    for name in configs:
        entry: dict[str, Any] = {"data_files": [{"split": split, "path": f"data/{name}/{split}-*.tar"}]}
        if name == default:
            entry["default"] = True
        meta_configs[name] = entry
        splits = SplitDict()
        nbytes = build.nbytes(name)  # the shards' bytes: the encoded images are stored as they are
        splits.add(SplitInfo(name=split, num_bytes=nbytes, num_examples=build.samples(name)))
        infos[name] = DatasetInfo(features=scan.schemas[name].features(class_names=names), splits=splits,
                                  download_size=nbytes, dataset_size=nbytes)  # fmt: skip
    MetadataConfigs(meta_configs).to_dataset_card_data(card_data)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    return _share_class_names(card_data.to_dict())


def _share_class_names(metadata: dict) -> dict:
    """Make every config's ``class_label`` names one object, so the YAML states the (up to 1000) names once and
    refers to them with an alias in the other configs (a card of 75 configs stays small and parses fast)."""
    shared: dict[str, dict] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            label = node.get("class_label")
            if isinstance(label, dict) and isinstance(label.get("names"), dict):
                key = repr(sorted(label["names"].items()))
                label["names"] = shared.setdefault(key, label["names"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(metadata.get("dataset_info"))
    return metadata

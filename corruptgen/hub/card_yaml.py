"""YAML metadata of a dataset card: licence and gating, and the Hub/`datasets` metadata.

The licence is inherited from the source (the gated ImageNet terms pattern for ImageNet-derived data, spec
hub_and_scale.md §1.2–1.6). :func:`build_metadata` assembles one config per subset with ``data_files`` pointing at
``data/<subset>/<split>-*.tar`` and its declared ``dataset_info`` features (:mod:`corruptgen.hub.card_scan`), written
without `datasets` in the encoding it reads. :func:`dump_yaml` writes it small: one line per config, each distinct
feature block and the class names once (YAML anchors; the other configs refer to them with an alias).

`datasets` keys the Arrow cache of a local or Hub repository on its YAML alone (the ``configs`` and ``dataset_info``
it parses), so every config states the plan id and a digest of the sha256 of its shards (``description``, a builder
parameter the Hub passes through): a rebuild that changes any byte is a new cache entry, never stale rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..engine.reader import Build
from ..errors import CorruptgenError
from .card_scan import DELTA_V_KEYS as DELTA_V_KEYS
from .card_scan import ScanResult, class_names, source_kind

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
    from ..family.benchmark import find_benchmark

    bench = find_benchmark(build.benchmark)
    return bench.title if bench is not None else build.benchmark


class Flow(dict):
    """A mapping written in YAML flow style (``{a: 1, b: 2}`` on one line)."""


class FlowList(list):
    """A sequence written in YAML flow style (``[a, b]``)."""


def shards_digest(build: Build, name: str) -> str:
    """sha256 (16 hex digits) of a config's shard paths and their recorded sha256, in order."""
    records = build.manifest.get("shards") or {}
    text = "\n".join(f"{rel} {(records.get(rel) or {}).get('sha256')}" for rel in build.shards(name))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_metadata(
    build: Build, scan: ScanResult, licence: Licence, *, pretty_name: str | None = None, arxiv: list[str] = ()
) -> dict:
    """The card's YAML metadata (a plain dict in the order the Hub documents it; :func:`dump_yaml` writes it);
    ``arxiv`` ids become ``arxiv:<id>`` tags, which the Hub links to the paper pages."""
    configs = build.configs()
    if not configs:
        raise CorruptgenError(f"{build.location}: the build has no samples; nothing to describe")
    split, default, plan_id = build.split, build.default_config(), build.manifest.get("plan_id")
    total = sum(build.samples(n) for n in configs)
    tags = ["webdataset", "corruptgen", "robustness", "image-corruptions", build.benchmark]
    names = class_names(build.manifest.get("source") or {}, scan.labels, scan.max_label)
    shared_names = Flow((str(i), n) for i, n in enumerate(names)) if names else None
    blocks: dict[str, list] = {}  # one object per distinct feature block: YAML writes it once, then aliases it
    meta_configs, infos = [], []
    for name in configs:
        entry = Flow(config_name=name, data_files=FlowList([Flow(split=split, path=f"data/{name}/{split}-*.tar")]))
        if name == default:
            entry["default"] = True
        entry["description"] = f"corruptgen plan {plan_id}, shards sha256 {shards_digest(build, name)}"
        meta_configs.append(entry)
        schema = scan.schemas[name]
        key, first = repr((schema.fields, schema.json_type)), False
        if key not in blocks:
            blocks[key], first = [Flow(f) for f in schema.yaml_features(shared_names)], True
        info = (dict if first else Flow)(config_name=name, features=blocks[key])
        info["splits"] = FlowList([Flow(name=split, num_bytes=build.nbytes(name), num_examples=build.samples(name))])
        infos.append(info)
    return {
        "pretty_name": pretty_name or f"{_title(build)} (corruptgen render)",
        **licence.yaml,
        "task_categories": FlowList(["image-classification"]),
        "task_ids": FlowList(["multi-class-image-classification"]),
        "size_categories": FlowList([size_category(total)]),
        "source_datasets": FlowList(source_datasets(build.manifest)),
        "tags": FlowList(dict.fromkeys([*tags, *(f"arxiv:{i}" for i in arxiv)])),
        "configs": meta_configs,
        "dataset_info": infos,
    }


def dump_yaml(metadata: dict) -> str:
    """YAML text of the metadata: block style, :class:`Flow` / :class:`FlowList` values on one line, an object
    that occurs twice written once with an anchor (libyaml's emitter when present: same text, faster)."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[misc, valid-type]
        pass

    Dumper.add_representer(Flow, lambda d, data: d.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True))
    Dumper.add_representer(FlowList, lambda d, data: d.represent_sequence("tag:yaml.org,2002:seq", data,
                                                                         flow_style=True))  # fmt: skip
    return yaml.dump(metadata, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1000)

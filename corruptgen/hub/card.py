"""Dataset cards for build directories: YAML metadata the Hub and `datasets` read, and a human-readable body.

Layout and metadata follow spec hub_and_scale.md §1.2–1.6 and §5: one config per subset with ``data_files`` pointing
at ``data/<subset>/<split>-*.tar``, declared ``dataset_info`` features per config (inferred from the samples, see
:mod:`corruptgen.hub.features`), the licence of the source (the gated ImageNet terms pattern for ImageNet-derived
data), and a body rendered from the family template in ``cards/<benchmark>.md``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from .build import Build
from .features import SubsetSchema, scan_subset
from .figures import delta_v_coverage, delta_v_histogram, sample_grid

README = "README.md"
ASSET_DIR = "images"
GRID = f"{ASSET_DIR}/sample_grid.png"
DELTA_V = f"{ASSET_DIR}/delta_v_histogram.png"
MARKER = "corruptgen-card"

#: Where the family templates live (repo checkout / editable install); a generic body is built in as a fallback.
TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "cards"

#: Sample-json ``params`` keys that hold the measured perceived change Δv (VCR, spec vcr.md: Δv = max(0, 1 − VIF)).
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


@dataclass
class Card:
    """A rendered card: README text, its YAML metadata, and the asset files it references (``{relpath: bytes}``)."""

    text: str
    metadata: dict[str, Any]
    assets: dict[str, bytes] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    schemas: dict[str, SubsetSchema] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        """Files the card adds to the build directory (relative paths)."""
        return [README, *sorted(self.assets)]


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

    schemas, delta_v, hashes = {}, {}, {}
    for name in tqdm(build.configs(), desc="scanning subsets", unit="subset", disable=not progress):
        values: list[float] = []

        def on_meta(meta: dict, values=values) -> None:
            params = meta.get("params")
            if isinstance(params, dict):
                for key in DELTA_V_KEYS:
                    v = params.get(key)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        values.append(float(v))
                        break
                if len(hashes) < 16:
                    _walk_hashes(params, "params", hashes)

        schemas[name] = scan_subset((build.root / r for r in build.shards(name)), limit=limit, on_meta=on_meta)
        if values:
            delta_v[name] = values
    return ScanResult(schemas, delta_v, hashes)


# ------------------------------------------------------------------------------------------------------- metadata


def size_category(n: int) -> str:
    for bound, label in _SIZE_CATEGORIES:
        if n < bound:
            return label
    return "n>1B"


def _title(build: Build) -> str:
    try:
        from ..benchmarks import get_benchmark

        return get_benchmark(build.benchmark).title
    except Exception:
        return build.benchmark


def build_metadata(build: Build, scan: ScanResult, licence: Licence, *, pretty_name: str | None = None) -> dict:
    """The card's YAML metadata (a plain dict, in the order the Hub documents it)."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    configs = build.configs()
    if not configs:
        raise CorruptgenError(f"{build.root}: the build has no samples; nothing to describe")
    split = build.split
    default = build.default_config()
    total = sum(build.samples(n) for n in configs)
    tags = ["webdataset", "corruptgen", "robustness", "image-corruptions", build.benchmark]
    card_data = DatasetCardData(
        pretty_name=pretty_name or f"{_title(build)} (corruptgen render)",
        task_categories=["image-classification"],
        size_categories=[size_category(total)],
        tags=list(dict.fromkeys(tags)),
        **licence.yaml,
    )
    meta_configs = {}
    infos = {}
    for name in configs:
        entry: dict[str, Any] = {"data_files": [{"split": split, "path": f"data/{name}/{split}-*.tar"}]}
        if name == default:
            entry["default"] = True
        meta_configs[name] = entry
        splits = SplitDict()
        splits.add(SplitInfo(name=split, num_examples=build.samples(name)))
        infos[name] = DatasetInfo(features=scan.schemas[name].features(), splits=splits,
                                  download_size=build.nbytes(name))  # fmt: skip
    MetadataConfigs(meta_configs).to_dataset_card_data(card_data)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    return card_data.to_dict()


# ------------------------------------------------------------------------------------------------------- body


def _category_names(benchmark: str) -> dict:
    import importlib

    try:
        module = importlib.import_module(f"corruptgen.benchmarks.{benchmark.replace('-', '_')}")
    except ImportError:
        return {}
    return getattr(module, "CATEGORY_NAMES", {}) or {}


def _human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _subsets_table(build: Build) -> str:
    cats = _category_names(build.benchmark)
    rows = ["| subset (config) | corruption | category | severity | samples | shards | size |",
            "|---|---|---|---|---:|---:|---:|"]  # fmt: skip
    for name in build.subset_names():
        s = build.subset(name)
        cat = s.get("category")
        cat_text = "" if cat is None else (f"{cat} {cats[cat]}" if cat in cats else str(cat))
        sev = "" if s.get("severity") is None else str(s["severity"])
        corr = s.get("corruption") or "— (clean reference)"
        rows.append(f"| `{name}` | {corr} | {cat_text} | {sev} | {build.samples(name):,} | {len(build.shards(name))} "
                    f"| {_human_bytes(build.nbytes(name))} |")  # fmt: skip
    counts = build.manifest.get("counts", {})
    total = sum(build.samples(n) for n in build.configs())
    rows.append(f"| **total** | | | | **{total:,}** | {sum(len(build.shards(n)) for n in build.configs())} | "
                f"{_human_bytes(sum(build.nbytes(n) for n in build.configs()))} |")  # fmt: skip
    notes = [f"{counts.get('inputs', '?')} source images; {counts.get('skipped_inputs', 0)} skipped (unreadable or "
             f"too large; listed in `manifest.json`), {counts.get('failed_samples', 0)} failed samples."]  # fmt: skip
    empty = [n for n in build.subset_names() if n not in build.configs()]
    if empty:
        notes.append(f"Subsets without any sample (no config): {', '.join(empty)}.")
    return "\n".join(rows) + "\n\n" + " ".join(notes)


def _source_text(source: dict[str, Any]) -> str:
    kind = source.get("kind", "?")
    if kind == "samples":
        what = "the scikit-image sample photographs (`samples`)"
    elif kind == "hf":
        what = f"the Hugging Face dataset `{source.get('name')}`" + (f" (split `{source['split']}`)"
                                                                    if source.get("split") else "")  # fmt: skip
    elif kind == "imagefolder":
        layout = source.get("layout")
        what = "an image folder" + (f" ({layout} layout)" if layout else "")
    elif kind == "webdataset":
        what = "WebDataset shards of clean images"
    else:
        what = f"a `{kind}` source"
    return what


def _family_options(plan: dict[str, Any]) -> dict[str, Any]:
    """The family options recorded in a plan (``family_options``; ``extra`` in early manifests)."""
    return dict(plan.get("family_options") or plan.get("extra") or {})


def _command(build: Build) -> tuple[str, bool]:
    """The `corruptgen build` command of this build (source path as a placeholder) and whether it was checked to
    give the recorded plan id (candidates with and without an explicit ``--subsets`` list are tried)."""
    plan, source = build.plan, build.manifest.get("source") or {}
    src = plan.get("source") or {}
    spec = src.get("spec", "samples")
    kind = source.get("kind", spec.split(":", 1)[0])
    shown = {"imagefolder": "imagefolder:<path-to-images>", "webdataset": "webdataset:'<path-to-shards>'"}.get(
        kind, spec
    )
    names = [s["name"] for s in plan.get("subsets", []) if s["name"] != "clean"]
    clean = any(s["name"] == "clean" for s in plan.get("subsets", []))
    pre = plan.get("preprocess") or {}
    common: dict[str, Any] = {"limit": src.get("limit"), "image_column": src.get("image_column"),
                              "label_column": src.get("label_column")}  # fmt: skip
    flags: list[str] = []
    if not clean:
        flags.append("--no-clean")
    for key, flag in (("limit", "--limit"), ("image_column", "--image-column"), ("label_column", "--label-column")):
        if common[key]:
            flags += [flag, str(common[key])]
    fields = {}
    for key, flag, default in (("seed", "--seed", 0), ("image_format", "--format", "jpg"), ("quality", "--quality", 85),
                               ("shard_size", "--shard-size", 1000), ("split", "--split", "test"),
                               ("max_pixels", "--max-pixels", 100_000_000)):  # fmt: skip
        if key in plan:
            fields[key] = plan[key]
            if plan[key] != default:
                flags += [flag, str(plan[key])]
    family = _family_options(plan)
    for key, value in sorted(family.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value not in (None, False):
            flags += [flag, ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)]
    candidates = []
    for with_subsets in (False, True):
        for preprocess, size in ((None, None), (pre.get("name"), None), (None, pre.get("crop")),
                                 (pre.get("name"), pre.get("crop"))):  # fmt: skip
            args = list(flags)
            if with_subsets:
                args = ["--subsets", ",".join(names), *args]
            if preprocess:
                args += ["--preprocess", preprocess]
            if size:
                args += ["--size", str(size)]
            kw = {"subsets": names if with_subsets else None, "preprocess": preprocess, "size": size}
            candidates.append((args, kw))
    for args, kw in candidates:
        try:
            from ..api import make_plan

            p = make_plan(build.benchmark, source=spec, clean=clean, **common, **kw, **fields, **family)
        except Exception:
            continue
        if p.plan_id == build.manifest.get("plan_id"):
            return " ".join(["corruptgen", "build", build.benchmark, "--source", shown, *args]), True
    args = ["--subsets", ",".join(names), *flags] if names else flags
    return " ".join(["corruptgen", "build", build.benchmark, "--source", shown, *args]), False


def _generation(build: Build, scan: ScanResult) -> str:
    m, plan = build.manifest, build.plan
    pre = plan.get("preprocess") or {}
    if pre.get("resize"):
        resize = f"resize to {pre['resize'][0]}×{pre['resize'][1]}"
    elif pre.get("resize_short"):
        resize = f"resize the shorter side to {pre['resize_short']}"
    else:
        resize = "no resize"
    crop = f" + centre crop {pre['crop']}×{pre['crop']}" if pre.get("crop") else ""
    pre_text = f"`{pre.get('name', '?')}`: {resize}{crop} ({pre.get('library', '?')}, {pre.get('interpolation', '?')})"
    fmt = plan.get("image_format", "jpg")
    quality = f", quality {plan.get('quality')}" if fmt in ("jpg", "webp") else ""
    rows = [
        "| | |",
        "|---|---|",
        f"| plan id | `{m.get('plan_id')}` (sha256 of the plan; the full plan is in `manifest.json`) |",
        f"| global seed | {plan.get('seed', 0)} — each sample's seed is sha256(seed, benchmark, subset, key) |",
        f"| source | {_source_text(m.get('source') or {})} |",
        f"| preprocessing | {pre_text} |",
        f"| images | `{fmt}`{quality} |",
        f"| shards | `data/<subset>/{build.split}-NNNNN.tar`, {plan.get('shard_size', '?')} samples each |",
    ]
    if _family_options(plan):
        rows.append(f"| family options | {', '.join(f'`{k}={v}`' for k, v in sorted(_family_options(plan).items()))} |")
    hashes: dict[str, set[str]] = {}
    _walk_hashes({k: v for k, v in m.items() if k not in ("shards", "skipped")}, "", hashes)
    for path, values in sorted({**hashes, **scan.hashes}.items()):
        shown = ", ".join(f"`{v}`" for v in sorted(values)[:4]) + (" …" if len(values) > 4 else "")
        rows.append(f"| `{path}` | {shown} |")
    versions = ", ".join(f"{k} {v}" for k, v in sorted((m.get("versions") or {}).items()))
    rows.append(f"| versions | {versions} |")
    command, checked = _command(build)
    how = "gives the same plan id" if checked else "approximately: the exact plan is in `manifest.json`"
    return (
        "\n".join(rows)
        + f"\n\nReproduce ({how}; with the same source images and library versions the shards are byte-identical, and "
        "`corruptgen verify .` re-hashes every shard against the sha256 recorded in `manifest.json`):\n\n```bash\n"
        + command
        + "\n```"
    )


def _figures(build: Build, scan: ScanResult, assets: dict[str, bytes]) -> str:
    out = []
    if GRID in assets:
        out.append(f"The first source image in one subset per corruption (middle severity where there are several):"
                   f"\n\n![sample grid]({GRID})")  # fmt: skip
    if DELTA_V in assets:
        rows = ["| subset | samples | Δv min | Δv median | Δv max | coverage (40 bins, ≥ 20 each) |",
                "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
        for name, values in scan.delta_v.items():
            rows.append(f"| `{name}` | {len(values):,} | {min(values):.3f} | {statistics.median(values):.3f} | "
                        f"{max(values):.3f} | {delta_v_coverage(values):.0%} |")  # fmt: skip
        out.append(f"Measured perceived change Δv = max(0, 1 − VIF) per subset:\n\n![Δv histogram]({DELTA_V})\n\n"
                   + "\n".join(rows))  # fmt: skip
    return "\n\n".join(out) if out else "_No images to show._"


def _loading(build: Build, repo_id: str | None, schemas: dict[str, SubsetSchema]) -> str:
    repo = repo_id or "<user>/<repo>"
    split = build.split
    default = build.default_config()
    images = [f for f, k in schemas[default].fields.items() if k == "image"] or ["jpg"]
    image_field = images[0]
    image_text = f"`<key>.{images[0]}`" if len(images) == 1 else (
        f"`<key>.{images[0]}` … `<key>.{images[-1]}` ({len(images)} frames)")  # fmt: skip
    has_cls = "cls" in schemas[default].fields
    sample_line = f'row["{image_field}"], row["json"]["params"]' + (', row["cls"]' if has_cls else "")
    cls_text = " + `<key>.cls` (class index, -1 when unknown)" if has_cls else ""
    return f"""One config per subset (`{default}`, ...), each with the split `{split}`. Every sample is
{image_text} + `<key>.json` (key, source key, label, subset, corruption, category, severity, the parameters
actually drawn, seed, preprocessing, library versions){cls_text}.

```python
import corruptgen

ds = corruptgen.load("{repo}", subset="{default}")                   # datasets.Dataset
ds = corruptgen.load("{repo}", subset="{default}", streaming=True)   # datasets.IterableDataset
row = next(iter(ds))
{sample_line}

from datasets import load_dataset                                  # the same with datasets alone
ds = load_dataset("{repo}", "{default}", split="{split}", streaming=True)
```

The features of every config are declared in this card (`dataset_info`), so `datasets` does not guess them from the
first samples. Fields whose values have no single type (declared `json`) are read through datasets' `Json` feature,
which keeps about 10 significant digits of floats; the exact values are in the `.json` member of each sample
(`webdataset`, `corruptgen.torch_loader`)."""


def _evaluation(build: Build, repo_id: str | None) -> str:
    where = "<local build directory>" if repo_id is None else "DIR"
    configs = build.configs()
    example = [n for n in configs if build.subset(n).get("corruption")][:2] or configs[:1]
    text = f"""With a local copy (`hf download {repo_id or "<user>/<repo>"} --repo-type dataset --local-dir DIR`
or the build directory itself), `corruptgen.torch_loader` streams float batches (B, 3, H, W) in [0, 1] with labels and
the per-sample json, sharded over DataLoader workers and nodes:

```python
import torch, corruptgen

loader = corruptgen.torch_loader("{where}", subsets={example!r}, batch_size=64, num_workers=4)
correct = total = 0  # model, normalize: your classifier and its input normalisation
with torch.no_grad():
    for images, labels, meta in loader:
        pred = model(normalize(images)).argmax(1)
        keep = labels >= 0
        correct += (pred[keep] == labels[keep]).sum().item()
        total += keep.sum().item()
print(correct / total)
```"""
    options = _eval_options()
    if options is not None:
        model = " --model <model>" if "--model" in options else ""
        text += (f"\n\nThe `corruptgen eval` command computes the benchmark's metrics directly (a local directory or "
                 f"the Hub repository; see `corruptgen eval --help`):\n\n```bash\ncorruptgen eval "
                 f"{repo_id or '<build directory>'}{model}\n```")  # fmt: skip
    return text


def _eval_options() -> set[str] | None:
    """The option strings of ``corruptgen eval`` when the eval package is installed (None otherwise)."""
    try:
        import argparse

        from ..cli import _extension_commands, build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        _extension_commands(sub)
        eval_parser = sub.choices.get("eval")
        if eval_parser is None:
            return None
        return {opt for action in eval_parser._actions for opt in action.option_strings}
    except Exception:
        return None


def _licence_section(build: Build, licence: Licence) -> str:
    text = [licence.text]
    corruptions = " ".join(str(build.subset(n).get("corruption") or "") for n in build.configs())
    if "frost" in corruptions:
        text.append(
            "The `frost` corruption blends in frost texture images distributed with the ImageNet-C code "
            "(hendrycks/robustness, also in bethgelab/imagecorruptions); their provenance and licence are not stated "
            "in any known public source, so treat them as third-party assets of unknown licence."
        )
    text.append("The corruptgen code that rendered this dataset is Apache-2.0.")
    return "\n\n".join(text)


_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def template_path(benchmark: str) -> Path | None:
    """``cards/<benchmark>.md`` (``_`` and ``-`` interchangeable), else ``cards/generic.md``, else None."""
    for name in (benchmark, benchmark.replace("_", "-"), benchmark.replace("-", "_"), "generic"):
        p = TEMPLATE_DIR / f"{name}.md"
        if p.is_file():
            return p
    return None


_FALLBACK = """# {{pretty_name}}

{{summary}}

## Subsets

{{subsets}}

## Sample images

{{figures}}

## How it was generated

{{generation}}

## Loading

{{loading}}

## Evaluating with corruptgen

{{evaluation}}

## Licence

{{license}}
"""


def fill_template(template: str, values: dict[str, str]) -> str:
    """Replace every ``{{ name }}``; an unknown name is an error (templates and code must agree)."""

    def sub(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise CorruptgenError(f"card template uses an unknown placeholder {{{{{key}}}}}")
        return values[key]

    return _PLACEHOLDER.sub(sub, template)


def render_card(
    directory: str | Path,
    *,
    repo_id: str | None = None,
    license: str | None = None,
    license_name: str | None = None,
    license_link: str | None = None,
    pretty_name: str | None = None,
    scan_limit: int | None = None,
    images: bool = True,
    progress: bool = False,
) -> Card:
    """Render the card of a build directory without writing anything.

    ``scan_limit`` caps the samples read per subset to infer the declared features (default: all of them, which is
    exact); ``license`` states the source licence (a Hub licence id such as ``cc-by-4.0``).
    """
    build = Build.open(directory)
    if not build.manifest.get("complete"):
        raise CorruptgenError(f"{build.root}: the build is incomplete; re-run the same `corruptgen build` to finish it")
    scan = scan_build(build, limit=scan_limit, progress=progress)
    licence = licence_for(build.manifest, license=license, license_name=license_name, license_link=license_link)
    metadata = build_metadata(build, scan, licence, pretty_name=pretty_name)
    assets: dict[str, bytes] = {}
    if images:
        grid = sample_grid(build)
        if grid:
            assets[GRID] = grid
        if scan.delta_v:
            assets[DELTA_V] = delta_v_histogram(scan.delta_v)
    counts = build.manifest.get("counts", {})
    total = sum(build.samples(n) for n in build.configs())
    summary = (
        f"{total:,} images in {len(build.configs())} subsets, rendered by "
        f"corruptgen from {counts.get('inputs', '?'):,} source images of "
        f"{_source_text(build.manifest.get('source') or {})} as WebDataset shards (`data/<subset>/*.tar`)."
    )
    values = {
        "pretty_name": metadata.get("pretty_name", build.benchmark),
        "benchmark": build.benchmark,
        "repo_id": repo_id or "<user>/<repo>",
        "summary": summary,
        "subsets": _subsets_table(build),
        "figures": _figures(build, scan, assets),
        "generation": _generation(build, scan),
        "loading": _loading(build, repo_id, scan.schemas),
        "evaluation": _evaluation(build, repo_id),
        "license": _licence_section(build, licence),
        "split": build.split,
    }
    path = template_path(build.benchmark)
    body = fill_template(path.read_text(encoding="utf-8") if path else _FALLBACK, values)
    marker = f"<!-- {MARKER}: plan_id={build.manifest.get('plan_id')} manifest_sha256={build.manifest_sha256()} -->"
    text = f"---\n{_yaml(metadata)}---\n\n{marker}\n\n{body.strip()}\n"
    return Card(text=text, metadata=metadata, assets=assets, configs=build.configs(), schemas=scan.schemas)


def _yaml(metadata: dict) -> str:
    """Block-style YAML as huggingface_hub writes cards (libyaml's emitter when present: same text, faster)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(metadata, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)


def write_card(directory: str | Path, **options: Any) -> Card:
    """Render and write ``README.md`` and the figures (``images/``) of a build directory; see :func:`render_card`."""
    card = render_card(directory, **options)
    save_card(directory, card)
    return card


def save_card(directory: str | Path, card: Card) -> None:
    """Write a rendered card into a build directory (figures it no longer has are removed)."""
    root = Path(directory)
    for rel in (GRID, DELTA_V):
        if rel not in card.assets:
            (root / rel).unlink(missing_ok=True)
    for rel, data in card.assets.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / README).write_text(card.text, encoding="utf-8")


def card_marker(directory: str | Path) -> dict[str, str] | None:
    """The ``plan_id`` / ``manifest_sha256`` a corruptgen-written README records, or None."""
    path = Path(directory) / README
    if not path.is_file():
        return None
    match = re.search(rf"<!-- {MARKER}: plan_id=(\S+) manifest_sha256=(\S+) -->", path.read_text(encoding="utf-8"))
    return {"plan_id": match.group(1), "manifest_sha256": match.group(2)} if match else None

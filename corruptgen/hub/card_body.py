"""The human-readable body of a dataset card: one section per template placeholder.

A summary table (under the title), subsets and counts table, how the data was generated (plan id, seed,
preprocessing, checksums, a reproducing command), figures, how to load and evaluate it, and the licence section.
"""

from __future__ import annotations

import os
import statistics
from typing import Any

from ..engine.invocation import FLAGS, command
from ..engine.invocation import record as invocation_record
from ..engine.reader import Build
from ..io.facts import flag_counts
from ..io.shown import shown_path
from .card_scan import ScanResult, walk_hashes
from .card_yaml import Licence
from .features import SubsetSchema
from .figures import delta_v_coverage

ASSET_DIR = "images"
GRID = f"{ASSET_DIR}/sample_grid.png"
DELTA_V = f"{ASSET_DIR}/delta_v_histogram.png"


def _category_names(benchmark: str) -> dict:
    from ..family.benchmark import find_benchmark

    bench = find_benchmark(benchmark)
    return dict(bench.category_names) if bench is not None else {}


def human_bytes(n: float) -> str:
    """``1536`` → ``1.5 KB`` (binary units), for cards and push summaries."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _grid_text(build: Build, configs: list[str]) -> str:
    """``19 corruptions × severities 1–5`` (or ``at severities 1, 3``), plus ``clean`` when built."""
    severities: dict[str, set] = {}
    for name in configs:
        s = build.subset(name)
        if s.get("corruption"):
            severities.setdefault(s["corruption"], set()).add(s.get("severity"))
    text = f"{len(severities)} corruption{'s' * (len(severities) != 1)}"
    levels = {frozenset(v) for v in severities.values()}
    common = sorted(next(iter(levels))) if len(levels) == 1 and None not in next(iter(levels)) else None
    if common and len(common) > 2 and common == list(range(common[0], common[-1] + 1)):
        text += f" × severities {common[0]}–{common[-1]}"
    elif common:
        text += f" at severit{'ies' if len(common) > 1 else 'y'} {', '.join(map(str, common))}"
    elif any(None not in v for v in levels):
        text += " at several severities"
    return text + (", and `clean`" if "clean" in configs else "")


def _summary(build: Build, metadata: dict, licence: Licence, papers: list[str], repo_id: str | None) -> str:
    """The table under the title: what the build holds, its labels, licence, paper and how to load one config."""
    configs, counts = build.configs(), build.manifest.get("counts", {})
    total = sum(build.samples(n) for n in configs)
    fmt = build.plan.get("image_format", "jpg")
    shards = sum(len(build.shards(n)) for n in configs)
    first = metadata["dataset_info"][0]["features"] if metadata.get("dataset_info") else []
    label = next((f["dtype"]["class_label"]["names"] for f in first if isinstance(f.get("dtype"), dict)), None)
    labelled = any(f.get("name") == "cls" for f in first)
    labels = (f"{len(label):,} classes (`cls`, a `ClassLabel`; -1 = unlabelled)" if label else
              "class indices (`cls`, -1 = unlabelled); no class names declared" if labelled else "none")  # fmt: skip
    stated = licence.yaml.get("license_name") or licence.yaml.get("license", "other")
    rows = [
        "| | |",
        "|---|---|",
        f"| subsets | {len(configs)} configs: {_grid_text(build, configs)}; default `{build.default_config()}` |",
        f"| images | {total:,} ({fmt}) from {counts.get('inputs', '?'):,} source images of "
        f"{_source_text(build.manifest.get('source') or {})} |",
        f"| shards | {shards:,} WebDataset tar files, {human_bytes(sum(build.nbytes(n) for n in configs))} "
        f"(`data/<subset>/{build.split}-*.tar`) |",
        f"| labels | {labels} |",
        f"| licence | `{stated}` (see Licence below) |",
    ]
    if papers:
        rows.append("| paper | " + ", ".join(f"[arXiv:{i}](https://arxiv.org/abs/{i})" for i in papers) + " |")
    rows.append(f"| plan id | `{build.manifest.get('plan_id')}` |")
    load = f'datasets.load_dataset("{repo_id or "<user>/<repo>"}", "{build.default_config()}", split="{build.split}")'
    rows.append(f"| load | `{load}` |")
    return "Rendered by corruptgen as WebDataset shards, one `datasets` config per subset.\n\n" + "\n".join(rows)


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
                    f"| {human_bytes(build.nbytes(name))} |")  # fmt: skip
    counts = build.manifest.get("counts", {})
    configs = build.configs()
    total = sum(build.samples(n) for n in configs)
    rows.append(f"| **total** | | | | **{total:,}** | {sum(len(build.shards(n)) for n in configs)} | "
                f"{human_bytes(sum(build.nbytes(n) for n in configs))} |")  # fmt: skip
    notes = [f"{counts.get('inputs', '?')} source images; {counts.get('skipped_inputs', 0)} skipped (unreadable or "
             f"too large; listed in `manifest.json`), {counts.get('failed_samples', 0)} failed samples."]  # fmt: skip
    empty = [n for n in build.subset_names() if n not in configs]
    if empty:
        notes.append(f"Subsets without any sample (no config): {', '.join(empty)}.")
    return "\n".join(rows) + "\n\n" + " ".join(notes) + _fooled_table(build)


def _fooled_table(build: Build) -> str:
    """Per adversarial subset, the share of stored images the surrogate misclassifies and of those stored identical to
    their clean twin (from the shard facts; empty for builds without them)."""
    fooled = flag_counts(build.manifest, "fooled_surrogate")
    if not fooled:
        return ""
    same, wrong = (flag_counts(build.manifest, flag) for flag in ("stored_unchanged", "surrogate_wrong_clean"))
    rows = ["| subset | fooled the surrogate | already wrong on the clean image | stored identical to clean |",
            "|---|---:|---:|---:|"]  # fmt: skip
    for name, (n, total) in fooled.items():
        cells = [f"{counts[name][0]:,}" if name in counts else "?" for counts in (wrong, same)]
        rows.append(f"| `{name}` | {n:,} of {total:,} ({n / total:.0%}) | {cells[0]} | {cells[1]} |")
    return ("\n\nThe surrogate's decision on each *stored* image (`params.fooled_surrogate`: its top-1 is not the "
            "class attacked; `params.surrogate_wrong_clean`: nor was it on the clean image; an image identical to its "
            "clean twin says why in `params.unchanged_reason`):\n\n" + "\n".join(rows))  # fmt: skip


def _source_text(source: dict[str, Any]) -> str:
    kind = source.get("kind", "?")
    if kind == "samples":
        what = "the scikit-image sample photographs (`samples`)"
    elif kind == "hf":
        split = f" (split `{source['split']}`)" if source.get("split") else ""
        what = (f"a local Hugging Face dataset (`{shown_path(str(source.get('name')))}`){split}" if _local_hf(source)
                else f"the Hugging Face dataset `{source.get('name')}`{split}")  # fmt: skip
    elif kind == "imagefolder":
        layout = source.get("layout")
        what = "an image folder" + (f" ({layout} layout)" if layout else "")
    elif kind == "webdataset":
        what = "WebDataset shards of clean images"
    else:
        what = f"a `{kind}` source"
    return what


def _local_hf(source: dict[str, Any]) -> bool:
    """An ``hf:`` source read from a local folder (``local``; an absolute name in manifests before it was recorded)."""
    return bool(source.get("local")) or os.path.isabs(str(source.get("name") or ""))


def _family_options(plan: dict[str, Any]) -> dict[str, Any]:
    """The family options recorded in a plan (``family_options``; ``extra`` in early manifests)."""
    return dict(plan.get("family_options") or plan.get("extra") or {})


def _command(build: Build) -> tuple[str, bool]:
    """The `corruptgen build` command of this build (a local source path as a placeholder) and whether it is the
    recorded invocation (manifests before the invocation was recorded: rebuilt from the plan, unchecked)."""
    plan, source = build.plan, build.manifest.get("source") or {}
    spec = (plan.get("source") or {}).get("spec", "samples")
    kind = source.get("kind", spec.split(":", 1)[0])
    shown = {"imagefolder": "imagefolder:<path-to-images>", "webdataset": "webdataset:<path-to-shards>",
             "filelist": "filelist:<list>:<root>", "npy": "npy:<images.npy>:<labels.npy>"}.get(kind)  # fmt: skip
    if kind == "hf" and _local_hf(source):
        shown = "hf:<path-to-dataset>" + (f":{source['split']}" if ":" in spec.removeprefix("hf:") else "")
    recorded = build.manifest.get("invocation")
    if isinstance(recorded, dict) and isinstance(recorded.get("arguments"), dict):
        arguments = recorded["arguments"]
        return command(build.benchmark, arguments, source=shown or arguments.get("source", spec)), True
    src = plan.get("source") or {}
    arguments: dict[str, Any] = {"source": shown or spec, "subsets": [s["name"] for s in plan.get("subsets", [])
                                                                       if s["name"] != "clean"]}  # fmt: skip
    if not any(s["name"] == "clean" for s in plan.get("subsets", [])):
        arguments["clean"] = False
    for key in FLAGS.keys() - {"source", "subsets", "preprocess"}:  # source fields, then plan fields
        if src.get(key):
            arguments[key] = src[key]
        elif key in plan:
            arguments[key] = plan[key]
    arguments.update({k: v for k, v in _family_options(plan).items() if v not in (None, False)})
    return command(build.benchmark, invocation_record(build.benchmark, arguments)["arguments"]), False


def _generation(build: Build) -> str:
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
    walk_hashes({k: v for k, v in m.items() if k not in ("shards", "skipped")}, "", hashes)
    for path, values in sorted(hashes.items()):
        shown = ", ".join(f"`{v}`" for v in sorted(values)[:4]) + (" …" if len(values) > 4 else "")
        rows.append(f"| `{path}` | {shown} |")
    versions = ", ".join(f"{k} {v}" for k, v in sorted((m.get("versions") or {}).items()))
    rows.append(f"| versions | {versions} |")
    shown, recorded = _command(build)
    how = "the command that made it" if recorded else "rebuilt from the plan: the exact plan is in `manifest.json`"
    return (
        "\n".join(rows)
        + f"\n\nReproduce ({how}; with the same source images and library versions the shards are byte-identical, and "
        "`corruptgen verify .` re-hashes every shard against the sha256 recorded in `manifest.json`):\n\n```bash\n"
        + shown
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
        out += _vcr_support(scan)
    return "\n\n".join(out) if out else "_No images to show._"


def _vcr_support(scan: ScanResult) -> list[str]:
    """A note on the subsets whose Δv coverage is below the minimum support of a VCR curve (no R̂ from them)."""
    from ..eval.metrics.vcr_support import MIN_SUPPORT

    thin = [f"`{n}` ({delta_v_coverage(v):.0%})" for n, v in scan.delta_v.items() if delta_v_coverage(v) < MIN_SUPPORT]
    if not thin:
        return []
    return [f"With its default settings (40 bins of ≥ 20 images, at least {MIN_SUPPORT:.0%} of them) `corruptgen "
            f"eval` estimates no VCR curve for a subset covered less (R̂_a, R̂_p, HMRI and MRSI are null, with the "
            f"reason): {', '.join(thin)}."]  # fmt: skip


def _loading(build: Build, repo_id: str | None, schemas: dict[str, SubsetSchema]) -> str:
    repo = repo_id or "<user>/<repo>"
    split = build.split
    default = build.default_config()
    images = [f for f, k in schemas[default].fields.items() if k in ("image", "array")] or ["jpg"]
    image_field = images[0]
    image_text = f"`<key>.{images[0]}`" if len(images) == 1 else (
        f"`<key>.{images[0]}` … `<key>.{images[-1]}` ({len(images)} frames)")  # fmt: skip
    if schemas[default].fields.get(image_field) == "array":
        image_text += " (a float32 (H, W, 3) array on [0, 1]: `datasets` reads nested lists, `numpy.load` the file)"
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
    text += (f"\n\nThe `corruptgen eval` command computes the benchmark's metrics directly (a local directory or "
             f"the Hub repository; see `corruptgen eval --help`):\n\n```bash\ncorruptgen eval "
             f"{repo_id or '<build directory>'} --model <model>\n```")  # fmt: skip
    return text


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

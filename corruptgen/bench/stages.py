"""Per-stage measurements of each family on the same inputs, and the baselines of issues A–E beside them.

Stages (``images`` = what the stage produced, ``images_per_s`` = images / seconds):

* ``decode``: read + decode + preprocess each input (the engine's :func:`~corruptgen.chunk.load_image`);
* ``corrupt``: every subset's corruption on every decoded input, as the engine runs it (batched forms in batches of
  ``batch_size`` on ``device``; VCR includes its Δv search);
* ``vif`` (VCR only): the VIF evaluations of the search, batched: one :class:`~corruptgen.quality.VIFReference` per
  clean image against its corrupted outputs (both as stored), ``batch_size`` candidates per call;
* ``encode``: the build's image encoding (JPEG q85 by default);
* ``write``: the sample metadata and the tar shard writing (:class:`~corruptgen.io.shards.ShardWriter`, fsync and
  hash included) into a temporary directory;
* ``end_to_end``: a real :func:`corruptgen.build` of the family on the same inputs into a temporary directory
  (clean subset included; ``samples_per_s`` counts every sample, ``corrupted_per_s`` the corrupted ones).

Ratios are ours ÷ baseline in images per second: above 1 ours is faster.
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError

#: Families ``corruptgen bench`` knows, in the order they run; ``eval`` is issue E (model evaluation).
FAMILIES = ("syn2nat", "imagenet-c", "vcr", "opticsbench", "eval")
#: Seconds a single-image baseline is timed per group (per subset, or for all VIF pairs) once it has one image.
BASELINE_BUDGET_S = {"imagenet-c": 0.15, "vcr": 3.0, "opticsbench": 0.3}
#: At most this many inputs keep their outputs for the VIF stage (memory stays bounded with a large ``--images``).
VIF_MAX_INPUTS = 32


@dataclass(frozen=True)
class Settings:
    device: str = "cpu"
    batch_size: int = 64
    repeats: int = 1
    quality: int = 85
    model: str = "efficientnet_lite0"
    io_threads: int | None = None  # end-to-end build schedule (None: the engine's default for the device)


def _sync(device: str) -> Callable[[], None]:
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


class Clock:
    """Accumulates seconds of timed blocks (``with clock:``), synchronising CUDA around each on a GPU device."""

    def __init__(self, device: str = "cpu") -> None:
        self.sync = _sync(device)
        self.seconds = 0.0
        self._t0 = 0.0

    def __enter__(self) -> Clock:
        self.sync()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.sync()
        self.seconds += time.perf_counter() - self._t0


def measurement(images: int, seconds: float, **extra: Any) -> dict[str, Any]:
    ips = images / seconds if seconds > 0 else None
    return {"images": int(images), "seconds": round(seconds, 6), "images_per_s": ips, **extra}


def _median_runs(runs: list[dict[str, tuple[int, float]]]) -> dict[str, dict[str, Any]]:
    """Per stage: the images of the first run and the median seconds over the runs."""
    return {name: measurement(runs[0][name][0], statistics.median(r[name][1] for r in runs)) for name in runs[0]}


def ratio(ours: dict | None, base: dict | None) -> float | None:
    if not ours or not base or not ours.get("images_per_s") or not base.get("images_per_s"):
        return None
    return ours["images_per_s"] / base["images_per_s"]


# ------------------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class Inputs:
    """``count`` input files (the source cycled) in ``folder``, opened as ``imagefolder:<folder>``."""

    folder: Path
    count: int
    source: str
    source_count: int

    @property
    def spec(self) -> str:
        return f"imagefolder:{self.folder}"

    @property
    def paths(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir() if p.is_file())


_EXT = {"JPEG": "jpg", "MPO": "jpg", "PNG": "png", "WEBP": "webp", "BMP": "bmp", "TIFF": "tif", "GIF": "gif"}


def materialize_inputs(source: str, images: int | None, folder: Path) -> Inputs:
    """Write the first ``images`` inputs of ``source`` (cycled when it has fewer; default: all of it, at most 10)
    as files in ``folder``, their bytes as the source serves them: every stage and the build read the same files."""
    from PIL import Image

    from ..io.decode import BadImageError
    from ..io.sources import open_source

    src = open_source(source)
    m = len(src)
    if m == 0:
        raise CorruptgenError(f"source {source!r} has no images")
    n = images if images is not None else min(m, 10)
    folder.mkdir(parents=True, exist_ok=True)
    cache: dict[int, tuple[bytes, str] | None] = {}
    written = 0
    for i in range(n):
        j = i % m
        if j not in cache:
            try:
                data = src.read(j)
                with Image.open(io.BytesIO(data)) as im:
                    ext = _EXT.get(im.format or "")
                if ext is None:  # an exotic container: store it losslessly as PNG
                    from ..io.decode import decode_image

                    arr, _ = decode_image(data)
                    buf = io.BytesIO()
                    Image.fromarray(arr).save(buf, format="PNG")
                    data, ext = buf.getvalue(), "png"
                cache[j] = (data, ext)
            except (BadImageError, OSError, ValueError):
                cache[j] = None
        if cache[j] is not None:
            data, ext = cache[j]
            (folder / f"img_{i:06d}.{ext}").write_bytes(data)
            written += 1
    if written == 0:
        raise CorruptgenError(f"source {source!r}: none of its first {min(n, m)} images could be read")
    return Inputs(folder=folder, count=written, source=source, source_count=m)


# ------------------------------------------------------------------------------------------------ stages


def family_plan(family: str, inputs: Inputs, settings: Settings):
    from ..api import make_plan

    return make_plan(family, source=inputs.spec, quality=settings.quality)


def _corrupt_subset(plan, subset, images, keys, settings: Settings, clock: Clock) -> list[tuple[str, int, Any, Any]]:
    """(key, input index, output, params) of one subset over every input, timed into ``clock`` (as the engine)."""
    from ..chunk import _takes
    from ..corruptions import get
    from ..seeding import sample_rng

    corruption = get(subset.corruption)
    options = dict(subset.options)
    jobs = [(key, i) for i, item_key in enumerate(keys) for key in subset.sample_keys(item_key)]
    out = []
    if corruption.batch_fn is not None:
        wants_index = _takes(corruption.batch_fn, "sample_indices")
        for start in range(0, len(jobs), settings.batch_size):
            part = jobs[start : start + settings.batch_size]
            rngs = [sample_rng(plan.seed, plan.benchmark, subset.name, key)[1] for key, _ in part]
            extra = {"sample_indices": [i for _, i in part]} if wants_index else {}
            with clock:
                batch = np.stack([images[i] for _, i in part])
                results, params = corruption.batch_fn(batch, rngs, device=settings.device, **options, **extra)
            out.extend((key, i, r, p) for (key, i), r, p in zip(part, results, params, strict=True))
        return out
    wants_index = _takes(corruption.fn, "sample_index")
    for key, i in jobs:
        _, rng = sample_rng(plan.seed, plan.benchmark, subset.name, key)
        extra = {"sample_index": i} if wants_index else {}
        with clock:
            result, params = corruption.apply(images[i], rng, **options, **extra)
        out.append((key, i, result, params))
    return out


def run_stages(
    plan, inputs: Inputs, settings: Settings, workdir: Path, *, keep_vif: bool = False, limit: int | None = None
) -> dict[str, Any]:
    """One pass of decode → corrupt → encode → write over every input (the first ``limit``) and subset; returns
    per-stage ``(images, seconds)``, the decoded images and keys, and (``keep_vif``) the outputs of the first inputs."""
    from ..chunk import load_image, shard_relpath
    from ..io.decode import BadImageError
    from ..io.shards import ShardWriter, dump_json, encode_image
    from ..io.sources import open_source

    source = open_source(inputs.spec)
    items = source.items()[:limit]
    decode = Clock()
    images, keys = [], []
    for index, item in enumerate(items):
        try:
            with decode:
                image = load_image(source, index, plan)
        except BadImageError:
            continue
        images.append(image)
        keys.append(item.key)
    if not images:
        raise CorruptgenError(f"none of the {len(items)} inputs could be decoded")
    corrupt, encode, write = Clock(settings.device), Clock(), Clock()
    produced = 0
    kept: dict[int, list[np.ndarray]] = {}
    out_dir = Path(tempfile.mkdtemp(prefix="stages-", dir=workdir))
    for subset in plan.subsets:
        if subset.corruption is None:
            continue
        results = _corrupt_subset(plan, subset, images, keys, settings, corrupt)
        writer = ShardWriter(out_dir / shard_relpath(plan, subset.name, 0))
        for key, i, image, params in results:
            with encode:
                data = encode_image(image, plan.image_format, plan.quality)
            with write:
                meta = {"benchmark": plan.benchmark, "key": key, "source_key": keys[i], "subset": subset.name,
                        "corruption": subset.corruption, "severity": subset.severity, "params": params}  # fmt: skip
                writer.add(key, {"json": dump_json(meta), plan.image_format: data})
            if keep_vif and i < VIF_MAX_INPUTS:
                kept.setdefault(i, []).append(image)
        with write:
            writer.commit()
        produced += len(results)
    return {
        "stages": {
            "decode": (len(images), decode.seconds),
            "corrupt": (produced, corrupt.seconds),
            "encode": (produced, encode.seconds),
            "write": (produced, write.seconds),
        },
        "images": images,
        "keys": keys,
        "kept": kept,
    }


def end_to_end(family: str, inputs: Inputs, settings: Settings, out: Path) -> dict[str, Any]:
    """A real :func:`corruptgen.build` of ``family`` on the inputs into ``out`` (removed first)."""
    import shutil

    import corruptgen

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    result = corruptgen.build(family, source=inputs.spec, out=out, device=settings.device,
                              batch_size=settings.batch_size, quality=settings.quality,
                              io_threads=settings.io_threads)  # fmt: skip
    seconds = time.perf_counter() - t0
    counts = result.manifest["counts"]
    clean = sum(counts["per_subset"].get(s, 0) for s in ("clean",))
    samples = counts["samples"]
    return {**measurement(samples, seconds), "samples": samples, "samples_per_s": samples / seconds,
            "corrupted": samples - clean, "corrupted_per_s": (samples - clean) / seconds,
            "inputs": counts["inputs"], "build_dir": str(result.out_dir)}  # fmt: skip


def _budgeted(calls: list[Callable[[], Any]], budget_s: float) -> tuple[int, float, list[Any]]:
    """Run ``calls`` in order until ``budget_s`` is spent (at least one): (calls made, seconds, results)."""
    done, seconds, results = 0, 0.0, []
    for call in calls:
        t0 = time.perf_counter()
        results.append(call())
        seconds += time.perf_counter() - t0
        done += 1
        if seconds >= budget_s:
            break
    return done, seconds, results


# ------------------------------------------------------------------------------------------------ families


def bench_family(family: str, inputs: Inputs, settings: Settings, workdir: Path, shared: dict) -> dict[str, Any]:
    """Stages, end to end, baselines and ratios of one family (``shared`` carries the Syn2Nat build for eval)."""
    if family == "eval":
        return bench_eval(inputs, settings, workdir, shared)
    plan = family_plan(family, inputs, settings)
    run_stages(plan, inputs, settings, workdir, limit=1)  # warm-up: imports, transforms, caches, kernel stacks
    runs, last = [], None
    for _ in range(settings.repeats):
        last = run_stages(plan, inputs, settings, workdir, keep_vif=family == "vcr")
        runs.append(last["stages"])
    stages = _median_runs(runs)
    result: dict[str, Any] = {"subsets": [s.name for s in plan.subsets if s.corruption], "stages": stages}
    baselines: dict[str, Any] = {}
    ratios: dict[str, float | None] = {}
    if family == "vcr":
        vif_stage, base = _vcr_vif(last, settings)
        stages["vif"] = vif_stage
        baselines["C single-image NumPy + pyrtools VIF"] = base
        ratios["vif / single-image NumPy VIF"] = ratio(vif_stage, base)
    e2e = [end_to_end(family, inputs, settings, workdir / "build" / family) for _ in range(settings.repeats)]
    e2e_best = sorted(e2e, key=lambda r: r["seconds"])[len(e2e) // 2]
    result["end_to_end"] = e2e_best
    if family == "syn2nat":
        shared["syn2nat_build"] = e2e_best["build_dir"]
        baselines.update(_syn2nat_baselines(plan, inputs, last, settings))
        corrupted = measurement(e2e_best["corrupted"], e2e_best["seconds"])
        bare, bare_io = baselines["A bare albumentations loop, pre-decoded"], baselines["A bare loop + decode + encode"]
        ratios["corrupt / A bare loop"] = ratio(stages["corrupt"], bare)
        ratios["end to end / A bare loop"] = ratio(corrupted, bare)
        ratios["end to end / A bare loop + decode + encode"] = ratio(corrupted, bare_io)
    elif family == "imagenet-c":
        base = _imagenet_c_baseline(plan, last)
        baselines["B NumPy reference transcription"] = base
        ratios["corrupt / B reference"] = ratio(stages["corrupt"], base)
    elif family == "opticsbench":
        base = _optics_baseline(plan, last, settings)
        baselines["D per-image per-channel conv2d loop"] = base
        ratios["corrupt / D conv2d loop"] = ratio(stages["corrupt"], base)
    result["baselines"] = baselines
    result["ratios"] = ratios
    return result


def _syn2nat_baselines(plan, inputs: Inputs, last: dict, settings: Settings) -> dict[str, Any]:
    from .baselines import syn2nat_bare, syn2nat_bare_io

    images, keys = last["images"], last["keys"]
    n = len(images) * sum(1 for s in plan.subsets if s.corruption)
    paths = inputs.paths
    bare = statistics.median(syn2nat_bare(plan, images, keys) for _ in range(settings.repeats))
    bare_io = statistics.median(syn2nat_bare_io(plan, paths, settings.quality) for _ in range(settings.repeats))
    n_io = len(paths) * sum(1 for s in plan.subsets if s.corruption)
    return {"A bare albumentations loop, pre-decoded": measurement(n, bare),
            "A bare loop + decode + encode": measurement(n_io, bare_io)}  # fmt: skip


def _imagenet_c_baseline(plan, last: dict) -> dict[str, Any]:
    """Per subset, the reference on the first inputs until the time budget is spent; images/s over the same subset
    mix as ours: (subsets x inputs) / sum over subsets of (mean seconds per image x inputs)."""
    from .baselines import REFERENCE_MISSING, imagenet_c_reference, imagenet_c_reference_fn

    ref = imagenet_c_reference()
    if ref is None:
        return {"unavailable": REFERENCE_MISSING}
    images = last["images"]
    per_image, timed = 0.0, 0
    for subset in plan.subsets:
        if subset.corruption is None:
            continue
        name = subset.corruption.split("/", 1)[1]
        fn = imagenet_c_reference_fn(ref, name)
        calls = [
            lambda img=img, k=k, fn=fn, s=subset.severity: fn(img, np.random.default_rng(k), s)
            for k, img in enumerate(images)
        ]
        done, seconds, _ = _budgeted(calls, BASELINE_BUDGET_S["imagenet-c"])
        per_image += seconds / done
        timed += done
    subsets = sum(1 for s in plan.subsets if s.corruption)
    n = subsets * len(images)
    return measurement(n, per_image * len(images), timed_images=timed,
                       note="per subset: the first inputs until 0.15 s, scaled to all inputs")  # fmt: skip


def _vcr_vif(last: dict, settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ours: batched VIF of every kept input's outputs against it, both as stored; the baseline: the single-image
    NumPy VIF on the same (gray) pairs, until its budget is spent. Also the largest disagreement between them."""
    import torch

    from ..corruptions.vcr.search import one_torch_thread, stored
    from ..quality.vif import VIFReference
    from .baselines import PYRTOOLS_MISSING, gray, pyramid_pyrtools, pyrtools_available, vif_numpy

    images, kept = last["images"], last["kept"]
    pairs = {i: (stored(images[i]), np.stack([stored(o) for o in outs])) for i, outs in kept.items()}
    clock = Clock(settings.device)
    ours: list[float] = []
    n = 0
    with one_torch_thread():  # as VCR's search scores (and per core, like the single-image baseline)
        VIFReference(images[0], device=settings.device, dtype=torch.float64).score(images[0])  # warm-up
        for clean, cands in pairs.values():
            with clock:
                reference = VIFReference(clean, device=settings.device, dtype=torch.float64)
                for start in range(0, len(cands), settings.batch_size):
                    ours.extend(reference.score(cands[start : start + settings.batch_size]).cpu().numpy().tolist())
            n += len(cands)
    stage = measurement(n, clock.seconds, dtype="float64", torch_threads=1)
    if not pyrtools_available():
        return stage, {"unavailable": PYRTOOLS_MISSING}
    flat = [(gray(clean), gray(c)) for clean, cands in pairs.values() for c in cands]
    calls = [lambda a=a, b=b: vif_numpy(a, b, pyramid_pyrtools) for a, b in flat]
    vif_numpy(*flat[0], pyramid_pyrtools)  # warm-up (imports, filter tables)
    done, seconds, values = _budgeted(calls, BASELINE_BUDGET_S["vcr"])
    diff = float(np.max(np.abs(np.array(values) - np.array(ours[:done]))))
    return stage, measurement(done, seconds, max_abs_vif_difference=diff)


def _optics_baseline(plan, last: dict, settings: Settings) -> dict[str, Any]:
    """The conv2d loop (float32, on ``device``) with each subset's kernels on the same inputs, per subset until the
    budget is spent; images/s over the same subset mix as ours."""
    import torch

    from ..corruptions.optics import load_stack
    from .baselines import conv2d_loop

    images = last["images"]
    x = torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous().to(settings.device).float().div(255)
    sync = _sync(settings.device)
    rng = np.random.default_rng(0)
    per_image, timed = 0.0, 0
    subsets = [s for s in plan.subsets if s.corruption]
    for subset in subsets:
        options = dict(subset.options)
        stack, _ = load_stack(options.get("kernels"))
        severity = int(options.get("severity", subset.severity or 3))
        rows = rng.integers(0, stack.shape[0], size=len(images))  # the conv cost does not depend on the row
        kernels = torch.from_numpy(stack[rows, severity - 1]).to(settings.device)

        def call(i: int, kernels=kernels) -> None:
            conv2d_loop(x[i : i + 1], kernels[i : i + 1])
            sync()

        if not timed:
            call(0)  # warm-up
        calls = [lambda i=i: call(i) for i in range(len(images))]
        done, seconds, _ = _budgeted(calls, BASELINE_BUDGET_S["opticsbench"])
        per_image += seconds / done
        timed += done
    n = len(subsets) * len(images)
    return measurement(n, per_image * len(images), timed_images=timed, dtype="float32",
                       note="per subset: the first inputs until 0.3 s, scaled to all inputs")  # fmt: skip


def bench_eval(inputs: Inputs, settings: Settings, workdir: Path, shared: dict) -> dict[str, Any]:
    """Issue E on the Syn2Nat build of this run (built here when syn2nat was not benchmarked): decode of the
    build's JPEGs, the bare forward loop, and :func:`corruptgen.eval.evaluate` (read, decode, predict, metrics,
    results) with the model already loaded."""
    from ..eval import MetricOptions, evaluate, load_model
    from ..eval.data import open_source as open_eval_source
    from .baselines import bare_forward, decoded_build_images, normalised_batches

    build = shared.get("syn2nat_build")
    if build is None:
        build = end_to_end("syn2nat", inputs, settings, workdir / "build" / "syn2nat")["build_dir"]
    t0 = time.perf_counter()
    model = load_model(settings.model, settings.device)
    load_s = time.perf_counter() - t0
    # at most max(64, 6 x inputs) images: the first of each subset (evaluate(limit=...) reads the same ones)
    n_subsets = len(open_eval_source(build).select(None))
    limit = min(inputs.count, max(1, max(64, 6 * inputs.count) // n_subsets))
    t0 = time.perf_counter()
    images = decoded_build_images(build, model.input_size, limit)
    decode_s = time.perf_counter() - t0
    n = len(images)
    batches = normalised_batches(images, model, settings.batch_size, settings.device)
    import torch

    with torch.inference_mode():
        model.forward(batches[0][:2])  # warm-up
    bare, full = [], []
    for r in range(settings.repeats):
        bare.append(bare_forward(model.forward, batches, settings.device))
        t0 = time.perf_counter()
        options = MetricOptions(accuracy=False)  # accuracy where labelled, else the label-free metrics only
        run = evaluate(build, [model], out=workdir / f"eval-{r}", device=settings.device, options=options,
                       batch_size=settings.batch_size, workers=0, report=False, verify=False, limit=limit)  # fmt: skip
        full.append(time.perf_counter() - t0)
        if run.results[0]["eval"]["images"] != n:
            raise CorruptgenError(f"eval read {run.results[0]['eval']['images']} images, expected {n}")
    stages = {"decode": measurement(n, decode_s)}
    e2e = measurement(n, statistics.median(full), model=model.name, model_load_seconds=round(load_s, 3),
                      per_subset_limit=limit)  # fmt: skip
    base = measurement(n, statistics.median(bare), model=model.name)
    return {
        "build": build,
        "stages": stages,
        "end_to_end": e2e,
        "baselines": {"E bare model forward": base},
        "ratios": {"eval / E bare forward": ratio(e2e, base)},
    }

"""Each family's ``corruptgen bench`` run: its stages (:mod:`.stages`), its end-to-end build and the baseline of its
issue (A syn2nat, B imagenet-c, C vcr's VIF, D opticsbench, E eval) measured in the same run on the same images."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from .stages import Inputs, Settings, _sync, cpu_ratio, end_to_end, family_plan, ratio, run_stages
from .timing import time_work


def _timing(settings: Settings) -> dict[str, Any]:
    return {"runs": settings.repeats, "min_seconds": settings.min_run_s}


def _counted(fn, images: int):
    """A :func:`time_work` unit that calls ``fn`` and reports ``images``."""

    def work() -> int:
        fn()
        return images

    return work


def bench_family(family: str, inputs: Inputs, settings: Settings, workdir: Path, shared: dict) -> dict[str, Any]:
    """Stages, end to end, baselines and ratios of one family (``shared`` carries the Syn2Nat build for eval)."""
    if family == "eval":
        return bench_eval(inputs, settings, workdir, shared)
    plan = family_plan(family, inputs, settings)
    last = run_stages(plan, inputs, settings, workdir, keep_vif=family == "vcr")
    stages = last["stages"]
    result: dict[str, Any] = {"subsets": [s.name for s in plan.subsets if s.corruption], "stages": stages}
    baselines: dict[str, Any] = {}
    pairs: dict[str, tuple[dict | None, dict | None]] = {}  # ratio name -> (ours, baseline)
    if family == "vcr":
        vif_stage, base = _vcr_vif(last, settings)
        stages["vif"] = vif_stage
        baselines["C single-image NumPy + pyrtools VIF"] = base
        pairs["vif / single-image NumPy VIF"] = (vif_stage, base)
    e2e_best = end_to_end(family, inputs, settings, workdir / "build" / family)
    result["end_to_end"] = e2e_best
    if family == "syn2nat":
        shared["syn2nat_build"] = e2e_best["build_dir"]
        baselines.update(_syn2nat_baselines(plan, inputs, last, settings))
        per_corrupted = e2e_best["samples"] / max(1, e2e_best["corrupted"])
        corrupted = {"images_per_s": e2e_best["corrupted_per_s"],
                     "cpu_s_per_image": e2e_best["cpu_s_per_image"] * per_corrupted}  # fmt: skip
        bare, bare_io = baselines["A bare albumentations loop, pre-decoded"], baselines["A bare loop + decode + encode"]
        pairs["corrupt / A bare loop"] = (stages["corrupt"], bare)
        pairs["end to end / A bare loop"] = (corrupted, bare)
        pairs["end to end / A bare loop + decode + encode"] = (corrupted, bare_io)
    elif family == "imagenet-c":
        base = _imagenet_c_baseline(plan, last, settings)
        baselines["B NumPy reference transcription"] = base
        pairs["corrupt / B reference"] = (stages["corrupt"], base)
    elif family == "opticsbench":
        base = _optics_baseline(plan, last, settings)
        baselines["D per-image per-channel conv2d loop"] = base
        pairs["corrupt / D conv2d loop"] = (stages["corrupt"], base)
    result["baselines"] = baselines
    result["ratios"] = {name: ratio(*pair) for name, pair in pairs.items()}
    result["ratios_cpu"] = {name: cpu_ratio(*pair) for name, pair in pairs.items()}
    return result


def _syn2nat_baselines(plan, inputs: Inputs, last: dict, settings: Settings) -> dict[str, Any]:
    from .baselines import syn2nat_bare, syn2nat_bare_io

    images, keys = last["images"], last["keys"]
    subsets = sum(1 for s in plan.subsets if s.corruption)
    paths = inputs.paths
    bare = time_work(_counted(lambda: syn2nat_bare(plan, images, keys), len(images) * subsets), **_timing(settings))
    bare_io = time_work(_counted(lambda: syn2nat_bare_io(plan, paths, settings.quality), len(paths) * subsets),
                        **_timing(settings))  # fmt: skip
    return {"A bare albumentations loop, pre-decoded": bare, "A bare loop + decode + encode": bare_io}


def _imagenet_c_baseline(plan, last: dict, settings: Settings) -> dict[str, Any]:
    """The reference, one unit = the next input (cycling) through every subset: every run has the same subset mix
    as ours."""
    from .baselines import REFERENCE_MISSING, imagenet_c_reference, imagenet_c_reference_fn

    ref = imagenet_c_reference()
    if ref is None:
        return {"unavailable": REFERENCE_MISSING}
    images = last["images"]
    fns = [(imagenet_c_reference_fn(ref, s.corruption.split("/", 1)[1]), s.severity) for s in plan.subsets
           if s.corruption]  # fmt: skip
    state = {"next": 0}

    def one_input_all_subsets() -> int:
        k = state["next"]
        state["next"] += 1
        image = images[k % len(images)]
        for fn, severity in fns:
            fn(image, np.random.default_rng(k), severity)
        return len(fns)

    return time_work(one_input_all_subsets, **_timing(settings), note="one input through every subset per unit")


def _vcr_vif(last: dict, settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ours: batched VIF of every kept input's outputs against it, both as stored; the baseline: the single-image
    NumPy VIF on the same (gray) pairs, one pair per unit (cycling). Also the largest disagreement between them."""
    import torch

    from ..families.vcr.search import one_torch_thread, stored
    from ..quality.vif import VIFReference
    from .baselines import PYRTOOLS_MISSING, gray, pyramid_pyrtools, pyrtools_available, vif_numpy

    images, kept = last["images"], last["kept"]
    pairs = {i: (stored(images[i]), np.stack([stored(o) for o in outs])) for i, outs in kept.items()}
    ours: list[float] = []

    def score_all() -> int:
        ours.clear()
        for clean, cands in pairs.values():
            reference = VIFReference(clean, device=settings.device, dtype=torch.float64)
            for start in range(0, len(cands), settings.batch_size):
                ours.extend(reference.score(cands[start : start + settings.batch_size]).cpu().numpy().tolist())
        return len(ours)

    with one_torch_thread():  # as VCR's search scores (and per core, like the single-image baseline)
        stage = time_work(score_all, sync=_sync(settings.device), **_timing(settings), dtype="float64",
                          torch_threads=1)  # fmt: skip
    if not pyrtools_available():
        return stage, {"unavailable": PYRTOOLS_MISSING}
    flat = [(gray(clean), gray(c)) for clean, cands in pairs.values() for c in cands]
    values: dict[int, float] = {}
    state = {"next": 0}

    def one_pair() -> int:
        k = state["next"] % len(flat)
        state["next"] += 1
        values[k] = vif_numpy(*flat[k], pyramid_pyrtools)
        return 1

    base = time_work(one_pair, **_timing(settings))
    diff = max(abs(v - ours[k]) for k, v in values.items())
    return stage, {**base, "max_abs_vif_difference": float(diff)}


def _optics_baseline(plan, last: dict, settings: Settings) -> dict[str, Any]:
    """Baseline D: the conv2d loop (float32, on ``device``), one input per unit (cycling), its kernels drawn from the
    subsets in turn (the conv cost depends on the kernel size only: all 25x25)."""
    import torch

    from ..families.opticsbench.corruptions import load_stack
    from .baselines import conv2d_loop_work

    images = last["images"]
    x = torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous().to(settings.device).float().div(255)
    rng = np.random.default_rng(0)
    subsets = [s for s in plan.subsets if s.corruption]
    kernels = []
    for i in range(len(images)):
        options = dict(subsets[i % len(subsets)].options)
        stack, _ = load_stack(options.get("kernels"))
        severity = int(options.get("severity", subsets[i % len(subsets)].severity or 3))
        kernels.append(stack[rng.integers(0, stack.shape[0]), severity - 1])
    sizes = {k.shape for k in kernels}
    k = torch.from_numpy(np.stack(kernels)).to(settings.device)
    work = conv2d_loop_work(x, k, _sync(settings.device))
    return time_work(work, **_timing(settings), dtype="float32", kernel_shapes=sorted(str(s) for s in sizes))


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
    images = decoded_build_images(build, model.input_size, limit)
    n = len(images)
    stages = {"decode": time_work(_counted(lambda: decoded_build_images(build, model.input_size, limit), n),
                                  **_timing(settings))}  # fmt: skip
    batches = normalised_batches(images, model, settings.batch_size, settings.device)
    base = time_work(_counted(lambda: bare_forward(model.forward, batches, settings.device), n),
                     **_timing(settings), model=model.name)  # fmt: skip
    runs = {"count": 0}

    def one_evaluate() -> int:
        runs["count"] += 1
        options = MetricOptions(accuracy=False)  # accuracy where labelled, else the label-free metrics only
        run = evaluate(build, [model], out=workdir / f"eval-{runs['count']}", device=settings.device, options=options,
                       batch_size=settings.batch_size, workers=0, report=False, verify=False, limit=limit)  # fmt: skip
        if run.results[0]["eval"]["images"] != n:
            raise CorruptgenError(f"eval read {run.results[0]['eval']['images']} images, expected {n}")
        return n

    e2e = time_work(one_evaluate, **_timing(settings), model=model.name, model_load_seconds=round(load_s, 3),
                    per_subset_limit=limit)  # fmt: skip
    return {
        "build": build,
        "stages": stages,
        "end_to_end": e2e,
        "baselines": {"E bare model forward": base},
        "ratios": {"eval / E bare forward": ratio(e2e, base)},
        "ratios_cpu": {"eval / E bare forward": cpu_ratio(e2e, base)},
    }

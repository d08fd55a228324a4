"""Each family's ``corruptgen bench`` run: its stages (:mod:`.stages`), its end-to-end build and the baseline of its
issue (A syn2nat, B imagenet-c, C vcr's VIF, D opticsbench, E eval) measured in the same run on the same images."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from .stages import (
    BASELINE_BUDGET_S,
    Clock,
    Inputs,
    Settings,
    _budgeted,
    _median_runs,
    _sync,
    end_to_end,
    family_plan,
    measurement,
    ratio,
    run_stages,
)


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

    from ..families.vcr.search import one_torch_thread, stored
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

    from ..families.opticsbench.corruptions import load_stack
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

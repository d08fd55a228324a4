#!/usr/bin/env python
"""``--workers N`` scaling of a CPU build against its ceiling on the same machine (issue 33, "every core busy").

The workload: ``--family`` (default imagenet-c, all its default subsets) on ``--inputs`` distinct inputs (default
400: about 70 CPU-s at one worker), JPEG files (q90, shorter side 375 px, as ImageNet's validation images are about)
cut at spread offsets and sizes from the 10 bundled sample photos, as an image folder. For each N in ``--workers``
(default 1, 2, 4, 8, 16 and the core count, up to the cores this process may run on: ``os.sched_getaffinity``), in
each of ``--rounds`` rounds, one after the other:

* **build**: ``corruptgen build FAMILY --source imagefolder:... --workers N --out ... --no-progress`` in a fresh
  process, as a user runs it (default shard size, dataset card included), with ``CORRUPTGEN_TRACE`` set
  (:mod:`corruptgen.engine.trace`): the timeline says where the wall clock went;
* **ceiling**: the same samples split N ways, N independent fresh processes started at once, each running the bare
  per-sample loop over its share of the inputs (a contiguous range; blocks on the build's chunk boundaries): read +
  decode + preprocess each input once, then subset by subset corrupt (the engine's seed per sample) + encode + append
  to one tar file per subset and block, fsync'ed, as the build's shards are. Its wall clock (start of the first
  process to the end of the last) is what N processes of this machine can do with the work: SMT siblings, memory
  bandwidth, the neighbours' load, interpreter start-up and imports included, and no scheduling at all.

Printed per N (medians over the rounds): wall clock of the build and of the ceiling, ceiling ÷ build (the goal is
>= 0.9), the speed-up over one worker, CPU-seconds per worker (the build's workers: in tasks and in all; the ceiling's
processes), start-up per worker (spawned -> its first task set up), the driver's start-up (launched -> tasks handed
out), idle time per worker at the tail (its last task ended -> the last task of the build ended), and the driver's
CPU outside tasks. Every child runs with one OpenMP/BLAS thread (``OMP_NUM_THREADS=1``) and one OpenCV thread.

    python scripts/bench_scaling.py [--inputs 400] [--workers 1,2,4,8,16] [--rounds 1] [--family imagenet-c]
        [--subsets ...] [--quick] [--out docs/bench/scaling.json] [--doc docs/benchmarks.md]
    python scripts/bench_scaling.py table docs/bench/scaling.json
    python scripts/bench_scaling.py inputs DIR N        # only write the N inputs into DIR (scripts/gpu_check.sh)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import child_env, describe_machine, machine, publish

REGION = "scaling"
STEPS = (1, 2, 4, 8, 16)
QUICK = {"inputs": 24, "subsets": "gaussian_noise,glass_blur,fog,jpeg_compression", "workers": "1,2"}


# ------------------------------------------------------------------------------------------------ inputs


def make_inputs(folder: Path, n: int, processes: int = 1) -> str:
    """``n`` distinct JPEG inputs (q90, shorter side 375 px) cut from the 10 sample photos (seed 0; the same files
    whatever ``processes`` writes them); an ``imagefolder:``."""
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np

    (folder / "photos").mkdir(parents=True)
    rng = np.random.default_rng(0)
    cuts = [(i, *rng.uniform([0.5, 1.0, 0, 0], [0.9, 1.4, 1, 1])) for i in range(n)]
    processes = max(1, min(processes, n // 32))  # a process pool pays for itself from about 32 inputs each
    step = -(-n // processes)
    parts = [(folder, cuts[k : k + step]) for k in range(0, n, step)]
    if len(parts) <= 1:
        for part in parts:
            _write_inputs(part)
    else:
        with ProcessPoolExecutor(len(parts)) as pool:
            list(pool.map(_write_inputs, parts))
    return f"imagefolder:{folder}"


def _write_inputs(part: tuple[Path, list]) -> None:
    import io

    from PIL import Image

    from corruptgen.io.sources.samples import SamplesSource

    folder, cuts = part
    source = SamplesSource()
    photos = [Image.open(io.BytesIO(source.read(i))).convert("RGB") for i in range(len(source.items()))]
    for i, side, aspect, fx, fy in cuts:
        photo = photos[i % len(photos)]
        w, h = photo.size
        ch = int(min(h, w) * side)
        cw = min(w, int(ch * aspect))
        x, y = int(fx * (w - cw)), int(fy * (h - ch))
        crop = photo.crop((x, y, x + cw, y + ch))
        scale = 375 / min(crop.size)
        crop = crop.resize((round(crop.width * scale), round(crop.height * scale)), Image.Resampling.BILINEAR)
        crop.save(folder / "photos" / f"{i:05d}.jpg", quality=90)


# ------------------------------------------------------------------------------------------------ the ceiling


def ceiling_worker(family: str, source: str, inputs: int, subsets: str | None, k: int, n: int, out: str) -> dict:
    """Process ``k`` of ``n``: the bare loop over its share of the inputs (see the module docstring)."""
    import tarfile

    import cv2

    from corruptgen.alloc import tune_allocator
    from corruptgen.api import make_plan
    from corruptgen.corruptions import get
    from corruptgen.engine.chunk import sample_kwargs
    from corruptgen.io.codec import encode_image
    from corruptgen.io.decode import decode_image
    from corruptgen.seeding import sample_seed

    cv2.setNumThreads(1)
    tune_allocator()
    plan = make_plan(family, source=source, limit=inputs, subsets=subsets)
    paths = sorted(Path(source.split(":", 1)[1], "photos").iterdir())[:inputs]
    first, last = k * len(paths) // n, (k + 1) * len(paths) // n
    chosen = [(s, get(s.corruption) if s.corruption else None, dict(s.options)) for s in plan.subsets]
    ready, samples = time.time(), 0
    start = first
    while start < last:  # blocks on the build's chunk boundaries
        stop = min(last, (start // plan.shard_size + 1) * plan.shard_size)
        images = [plan.preprocess(decode_image(paths[i].read_bytes())[0], max_pixels=plan.max_pixels)
                  for i in range(start, stop)]  # fmt: skip
        for subset, corruption, options in chosen:
            with open(Path(out) / f"{subset.name}-{start:06d}.tar", "wb") as f:
                for i, image in zip(range(start, stop), images, strict=True):
                    for repeat, key in enumerate(subset.sample_keys(paths[i].stem)):
                        output = image
                        if corruption is not None:
                            seed = sample_seed(plan.seed, plan.benchmark, subset.name, key)
                            extra = sample_kwargs(corruption, plan, subset, paths[i].stem, i, repeat)
                            output = corruption.apply(image, seed, **options, **extra)[0]
                        data = encode_image(output, plan.image_format, plan.quality)
                        info = tarfile.TarInfo(f"{key}.{plan.image_format}")
                        info.size = len(data)
                        f.write(info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512))
                        samples += 1
                f.write(bytes(1024))
                f.flush()
                os.fsync(f.fileno())
        start = stop
    return {"ready": ready, "end": time.time(), "cpu": time.process_time(), "samples": samples}


def run_ceiling(family: str, source: str, inputs: int, subsets: str | None, n: int, tmp: Path) -> dict:
    """N ceiling processes started at once; wall from the first start to the last end, their CPU (``getrusage``)."""
    import resource

    out = tmp / "ceiling"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    env = child_env()
    before, launched = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    procs = [subprocess.Popen([sys.executable, __file__, "_ceiling", family, source, str(inputs), subsets or "",
                               str(k), str(n), str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for k in range(n)]  # fmt: skip
    outputs = [p.communicate() for p in procs]
    wall, after = time.time() - launched, resource.getrusage(resource.RUSAGE_CHILDREN)
    for p, (_, stderr) in zip(procs, outputs, strict=True):
        if p.returncode != 0:
            raise SystemExit(f"ceiling process failed:\n{stderr[-3000:]}")
    parts = [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]
    shutil.rmtree(out, ignore_errors=True)
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "cpu_per_process_s": [p["cpu"] for p in parts], "startup_s": [p["ready"] - launched for p in parts],
            "samples": sum(p["samples"] for p in parts)}  # fmt: skip


# ------------------------------------------------------------------------------------------------ the build


def run_build(family: str, source: str, inputs: int, subsets: str | None, n: int, tmp: Path) -> dict:
    """``corruptgen build`` at ``--workers n`` in a fresh process, traced; what its timeline says."""
    from corruptgen.bench.timing import run_child
    from corruptgen.engine.trace import ENV, read

    out, trace_file = tmp / "build", tmp / "trace.jsonl"
    shutil.rmtree(out, ignore_errors=True)
    trace_file.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "corruptgen", "build", family, "--source", source, "--limit", str(inputs),
            "--workers", str(n), "--out", str(out), "--no-progress"]  # fmt: skip
    if subsets:
        argv += ["--subsets", subsets]
    launched = time.time()
    child = run_child(argv, env={**child_env(), ENV: str(trace_file)})
    if child.done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{child.done.stderr[-3000:]}")
    manifest = json.loads((out / family / "manifest.json").read_text())
    result = timeline(read(trace_file), launched, child.wall_s, child.cpu_s)
    shutil.rmtree(out, ignore_errors=True)
    return {**result, "samples": manifest["counts"]["samples"], "shard_size": manifest["plan"]["shard_size"]}


def timeline(events: list[dict], launched: float, wall: float, cpu: float) -> dict:
    """Wall, CPU, start-up, tail idle and driver CPU of one traced build (see :mod:`corruptgen.engine.trace`)."""
    tasks = [e for e in events if e["event"] == "task"]
    setups = [e for e in events if e["event"] == "setup"]
    spawned = {e["worker"]: e["t"] for e in events if e["event"] == "spawn"}
    exits = {e["pid"]: e["cpu"] for e in events if e["event"] == "exit"}
    start = next(e for e in events if e["event"] == "render_start")
    driver = start["pid"]
    workers = sorted({e["pid"] for e in tasks})
    end = max(e["t"] for e in tasks)
    # start-up: spawned (the driver, for the in-process --workers 1: launched) -> its first task set up
    startup = [min(e["t"] for e in setups if e["pid"] == w) - spawned.get(w, launched) for w in workers]
    tail = [end - max(e["t"] for e in tasks if e["pid"] == w) for w in workers]
    in_tasks = sum(e["cpu"] - e["cpu_start"] for e in tasks)
    # CPU per worker: a worker process's own (its exit event); --workers 1 renders in the driver: all of it
    worker_cpu = [cpu] if driver in workers else [exits[w] for w in workers]
    rendered = next(e["t"] for e in events if e["event"] == "render_end")
    return {"wall_s": wall, "cpu_s": cpu, "workers_used": len(workers), "tasks": len(tasks),
            "schedule": start["tasks"], "task_cpu_per_worker_s": in_tasks / len(workers),
            "cpu_per_worker_s": statistics.mean(worker_cpu), "startup_s": startup,
            "driver_startup_s": start["t"] - launched, "tail_idle_s": tail,
            "finish_s": launched + wall - rendered,
            "driver_cpu_s": cpu - (in_tasks if driver in workers else sum(worker_cpu))}  # fmt: skip


# ------------------------------------------------------------------------------------------------ run and table


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_workers() -> list[int]:
    n = cores()
    return sorted({w for w in STEPS if w <= n} | {n})


def measure(family: str, inputs: int, subsets: str | None, workers: list[int], rounds: int) -> dict:
    load = [os.getloadavg()[0]]
    runs: dict[str, list] = {str(n): [] for n in workers}
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        tmp = Path(tmp)
        source = make_inputs(tmp / "inputs", inputs, cores())
        for r in range(rounds):
            for n in workers:
                pair = {"load_before": os.getloadavg()[0]}
                order = ("build", "ceiling") if r % 2 == 0 else ("ceiling", "build")  # which goes first alternates
                for what in order:
                    run = run_build if what == "build" else run_ceiling
                    pair[what] = run(family, source, inputs, subsets, n, tmp)
                pair["load_after"] = os.getloadavg()[0]
                runs[str(n)].append(pair)
                b, c = pair["build"], pair["ceiling"]
                print(f"round {r + 1} of {rounds}: --workers {n}: build {b['wall_s']:.1f} s, ceiling "
                      f"{c['wall_s']:.1f} s, ceiling / build {c['wall_s'] / b['wall_s']:.2f}; {b['samples']} samples, "
                      f"tasks {b['tasks']}, load average {pair['load_before']:.1f}", file=sys.stderr,
                      flush=True)  # fmt: skip
    load.append(os.getloadavg()[0])
    return {"machine": machine(load), "cores": cores(), "family": family, "inputs": inputs, "subsets": subsets,
            "rounds": rounds, "runs": runs, "commit": _commit(), "python": sys.version.split()[0]}  # fmt: skip


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "describe", "--always", "--dirty"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or "unknown"


def rows(result: dict) -> list[dict]:
    """Per N, the medians over the rounds of what the table shows."""
    med, out = statistics.median, []
    base = None
    for n, pairs in result["runs"].items():
        b = [p["build"] for p in pairs]
        c = [p["ceiling"] for p in pairs]
        row = {"workers": int(n), "build_s": med(x["wall_s"] for x in b), "ceiling_s": med(x["wall_s"] for x in c),
               "ratio": med(y["wall_s"] / x["wall_s"] for x, y in zip(b, c, strict=True)),
               "ratios": [y["wall_s"] / x["wall_s"] for x, y in zip(b, c, strict=True)],
               "samples": b[0]["samples"], "tasks": b[0]["tasks"], "shard_size": b[0]["shard_size"],
               "task_cpu": med(x["task_cpu_per_worker_s"] for x in b), "cpu": med(x["cpu_per_worker_s"] for x in b),
               "ceiling_cpu": med(statistics.mean(x["cpu_per_process_s"]) for x in c),
               "startup": med(statistics.mean(x["startup_s"]) for x in b),
               "ceiling_startup": med(statistics.mean(x["startup_s"]) for x in c),
               "driver_startup": med(x["driver_startup_s"] for x in b), "finish": med(x["finish_s"] for x in b),
               "tail": med(statistics.mean(x["tail_idle_s"]) for x in b),
               "tail_max": med(max(x["tail_idle_s"]) for x in b), "driver_cpu": med(x["driver_cpu_s"] for x in b),
               "load": med(p["load_before"] for p in pairs)}  # fmt: skip
        base = base or row
        row["speedup"] = base["build_s"] / row["build_s"]
        row["ceiling_speedup"] = base["ceiling_s"] / row["ceiling_s"]
        out.append(row)
    return out


def table(result: dict) -> str:
    what = f"{result['family']}" + (f" (`--subsets {result['subsets']}`)" if result.get("subsets") else "")
    body = rows(result)
    lines = [
        f"{what} on {result['inputs']:,} distinct JPEG inputs ({body[0]['samples']:,} samples, shard size "
        f"{body[0]['shard_size']}); median of {result['rounds']} round(s), build and ceiling alternating which goes "
        f"first; {result['cores']} cores usable; {describe_machine(result['machine'])}; this tree "
        f"({result['commit']}), Python {result['python']}",
        "",
        "| workers | build (s) | ceiling (s) | **ceiling ÷ build** | range over rounds | speed-up: build / ceiling "
        "| tasks | CPU per worker: in tasks / all / ceiling's (s) | start-up per worker: build / ceiling (s) "
        "| driver: start-up / finish / CPU outside tasks (s) | idle at the tail per worker: mean / max (s) "
        "| load average |",
        "|---" * 12 + "|",
    ]
    for r in body:
        cells = [
            str(r["workers"]), f"{r['build_s']:.1f}", f"{r['ceiling_s']:.1f}", f"**{r['ratio']:.2f}**",
            f"{min(r['ratios']):.2f}–{max(r['ratios']):.2f}", f"{r['speedup']:.2f}× / {r['ceiling_speedup']:.2f}×",
            str(r["tasks"]), f"{r['task_cpu']:.1f} / {r['cpu']:.1f} / {r['ceiling_cpu']:.1f}",
            f"{r['startup']:.2f} / {r['ceiling_startup']:.2f}",
            f"{r['driver_startup']:.2f} / {r['finish']:.2f} / {r['driver_cpu']:.2f}",
            f"{r['tail']:.2f} / {r['tail_max']:.2f}", f"{r['load']:.1f}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_ceiling":
        family, source, inputs, subsets, k, n, out = sys.argv[2:9]
        print(json.dumps(ceiling_worker(family, source, int(inputs), subsets or None, int(k), int(n), out)))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "inputs":  # inputs DIR N: the workload's inputs, written in parallel
        print(make_inputs(Path(sys.argv[2]), int(sys.argv[3]), cores()))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*", help="table: a saved result")
    ap.add_argument("--family", default="imagenet-c")
    ap.add_argument("--inputs", type=int, default=None, help="distinct inputs (default 400; --quick: 24)")
    ap.add_argument("--subsets", default=None, help="the build's --subsets (default: the family's)")
    ap.add_argument("--workers", default=None, help="comma-separated (default: 1,2,4,8,16 and the cores, up to them)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help=f"a small check of the script: {QUICK}")
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--doc", default=None, help="also write the table into this page's region 'scaling'")
    args = ap.parse_args()
    if args.mode == "table":
        result = json.loads(Path(args.files[0]).read_text())
    else:
        quick = QUICK if args.quick else {}
        inputs = args.inputs or quick.get("inputs", 400)
        subsets = args.subsets or quick.get("subsets")
        spec = args.workers or quick.get("workers")
        workers = [int(w) for w in spec.split(",")] if spec else default_workers()
        result = measure(args.family, inputs, subsets, workers, args.rounds)
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

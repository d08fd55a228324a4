#!/usr/bin/env python
"""On the fly vs in a build: CPU per image of each ImageNet-C-style corruption on the three paths a user takes, with
imagecorruptions 1.1.2 and corrupt-tta 0.1.7 beside them.

Paths, per size (the family of that resolution: ``imagenet-c`` at 224, ``cifar10-c`` at 32) and corruption at
``--severity``, on the four photos of ``bench_peers.py`` (Resize + CenterCrop), one thread everywhere (BLAS, OpenMP,
OpenCV pinned):

* **worker**: ``augment.RandomCorruption(family, names=[name], severity=s)`` made in the parent and called in a
  ``torch.utils.data.DataLoader`` worker (``num_workers=1``, a fresh worker per corruption; the parent never corrupts
  anything, so the worker starts with nothing that a corruption set up); timed inside the worker;
* **apply**: ``corruptions.get(name).apply`` in a fresh process per corruption;
* **build**: the same corruption's calls inside ``corruptgen.build`` (``--workers 1``, one subset, the photos cycled
  as an ``npy:`` source, ``preprocess="none"``): ``Corruption.apply`` is wrapped to add up the CPU of each call, so
  only the corruption counts, as the build makes it;
* **peers**: ``bench_peers.py``'s servers in ``--peer-python`` (numpy < 2), one timed run per round.

Each path makes one warm-up call per photo first; brightness and saturate then run until their exact colour table
exists (``imagenet_c/_hsv_table.py``: a worker, process or build that renders at least the table's break-even of
images of one severity), and the ``regime`` of every timed run is recorded. A cell is the median over ``--runs``
runs (the build: its samples after the warm-up cut into ``--runs`` consecutive parts) of CPU-ms per image
(``process_time``); the paths of one corruption run one after the other, not interleaved. ``worker ÷ build`` and
``apply ÷ build`` are the goal's ratios (within 1.1×), ``vs fastest peer`` the fastest peer's CPU ÷ the slower of
corruptgen's on-the-fly paths (≥ 1: no peer ahead).

    python -m venv peers && peers/bin/pip install "numpy<2" imagecorruptions==1.1.2 corrupt-tta==0.1.7
    python scripts/bench_on_the_fly.py --peer-python peers/bin/python --out docs/bench/on_the_fly.json \\
        --doc docs/benchmarks.md
    python scripts/bench_on_the_fly.py table docs/bench/on_the_fly.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import child_env, describe_machine, machine, publish
from bench_peers import FAMILY_FOR_SIZE, NAMES, TABLED, _photos, _regime, _Server

REGION = "on-the-fly"
PEERS = ("imagecorruptions", "corrupt-tta")
#: largest build input per size, bytes (the npy of cycled photos is memory-mapped)
BUILD_BYTES = 256 << 20


def _pin() -> None:
    import cv2

    cv2.setNumThreads(1)


def _counts() -> dict[str, int]:
    from corruptgen.families.imagenet_c._hsv_table import CACHE

    return dict(CACHE.counts)


def _warm(call, photos, name: str, start: int = 0) -> int:
    """One call per photo, then (brightness, saturate) calls until the colour table exists; returns the calls made."""
    from corruptgen.families.imagenet_c._hsv_table import break_even

    n = 0
    for _ in photos:
        call(start + n)
        n += 1
    if name in TABLED:
        builds, limit = _counts()["builds"], break_even(photos[0].shape[0] * photos[0].shape[1]) + 10
        while _counts()["builds"] == builds and n < limit:
            call(start + n)
            n += 1
    return n


def _runs(call, name: str, runs: int, min_seconds: float, start: int) -> list[dict]:
    """``runs`` timed runs of at least ``min_seconds``: CPU-s per call and the colour-table regime of each."""
    out, k = [], start
    for _ in range(runs):
        before, n, w0, c0 = _counts(), 0, time.perf_counter(), time.process_time()
        while n == 0 or time.perf_counter() - w0 < min_seconds:
            call(k)
            k, n = k + 1, n + 1
        out.append({"cpu": (time.process_time() - c0) / n, "calls": n, "regime": _regime(before, _counts())})
    return out if name in TABLED else [{**r, "regime": None} for r in out]


# ------------------------------------------------------------------------------------------------ the children
def child_apply(size: int, name: str, severity: int, runs: int, min_seconds: float) -> dict:
    """``get(name).apply`` in this (fresh) process."""
    _pin()
    from corruptgen.corruptions import get

    photos = _photos(size)
    corruption = get(f"{FAMILY_FOR_SIZE[size].replace('-', '_')}/{name}")

    def call(i: int):
        return corruption.apply(photos[i % len(photos)], i, severity=severity)

    start = _warm(call, photos, name)
    return {"runs": _runs(call, name, runs, min_seconds, start)}


def child_worker(size: int, name: str, severity: int, runs: int, min_seconds: float) -> dict:
    """``RandomCorruption`` in a DataLoader worker: a map-style dataset returns each corrupted photo as a CHW tensor
    (batches of 32 collated and sent to this process, as in training) with the CPU of its ``RandomCorruption`` call."""
    import torch

    from corruptgen.augment import RandomCorruption

    photos = _photos(size)

    class Items(torch.utils.data.Dataset):
        def __init__(self, aug) -> None:
            self.aug = aug

        def __len__(self) -> int:
            return 1 << 30

        def __getitem__(self, i: int):
            c0 = time.process_time()
            out = self.aug(photos[i % len(photos)])
            cpu = time.process_time() - c0
            return torch.from_numpy(out).permute(2, 0, 1), cpu, json.dumps(_counts())

    aug = RandomCorruption(FAMILY_FOR_SIZE[size], names=[name], severity=severity, seed=0)
    loader = torch.utils.data.DataLoader(Items(aug), batch_size=32, num_workers=1, worker_init_fn=lambda _: _pin())
    items = ((cpu, json.loads(c)) for batch in loader for cpu, c in zip(batch[1].tolist(), batch[2], strict=True))
    warm = len(photos) + (_break_even(size) + 10 if name in TABLED else 0)
    for _, counts in zip(range(warm), items, strict=False):
        if name in TABLED and counts[1]["builds"]:
            break
    before, out = counts[1], []
    for _ in range(runs):
        n, cpu, w0 = 0, 0.0, time.perf_counter()
        while n == 0 or time.perf_counter() - w0 < min_seconds:
            c, after = next(items)
            n, cpu = n + 1, cpu + c
        out.append({"cpu": cpu / n, "calls": n, "regime": _regime(before, after) if name in TABLED else None})
        before = after
    del items, loader  # the worker ends
    return {"runs": out}


def child_build(size: int, plan: dict[str, list[int]], severity: int, runs: int) -> dict:
    """Each corruption's calls inside a one-subset build of ``warm + measured`` cycled photos."""
    import numpy as np

    import corruptgen
    from corruptgen.corruptions import registry

    _pin()
    photos = _photos(size)
    calls: list[tuple[float, dict[str, int]]] = []
    original = registry.Corruption.apply

    def timed(self, image, rng=None, **options):
        c0 = time.process_time()
        result = original(self, image, rng, **options)
        calls.append((time.process_time() - c0, _counts()))
        return result

    registry.Corruption.apply = timed
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        total = max(w + m for w, m in plan.values())
        np.save(f"{tmp}/img.npy", np.stack([photos[i % len(photos)] for i in range(total)]))
        for name, (warm, measured) in plan.items():
            calls.clear()
            corruptgen.build(FAMILY_FOR_SIZE[size], source=f"npy:{tmp}/img.npy", subsets=f"{name}_s{severity}",
                             out=f"{tmp}/out", clean=False, limit=warm + measured, workers=1, card=False,
                             preprocess="none", overwrite=True)  # fmt: skip
            before = calls[warm - 1][1]
            parts = [calls[warm + i * (measured // runs) : warm + (i + 1) * (measured // runs)] for i in range(runs)]
            out[name] = {"runs": []}
            for part in parts:
                after = part[-1][1]
                regime = _regime(before, after) if name in TABLED else None
                out[name]["runs"].append({"cpu": sum(c for c, _ in part) / len(part), "calls": len(part),
                                          "regime": regime})  # fmt: skip
                before = after
    return out


# ------------------------------------------------------------------------------------------------ the driver
def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cell(runs: list[dict]) -> dict:
    cpus = sorted(r["cpu"] for r in runs)
    regimes = {r["regime"] for r in runs}
    return {"cpu_s_per_img": cpus[len(cpus) // 2], "cpu_runs": [r["cpu"] for r in runs],
            "regime": regimes.pop() if len(regimes) == 1 else "mixed"}  # fmt: skip


def measure(sizes: list[int], names: list[str], severity: int, runs: int, min_seconds: float,
            peer_python: str | None) -> dict:  # fmt: skip
    common = [str(severity), str(runs), str(min_seconds)]
    load, results = [os.getloadavg()[0]], []
    for size in sizes:
        servers = [_Server(impl, peer_python, size, None) for impl in PEERS] if peer_python else []
        try:
            rows = {}
            for name in names:
                row = {"apply": _cell(_child("apply", str(size), name, *common)["runs"])}
                row["worker"] = _cell(_child("worker", str(size), name, *common)["runs"])
                per_image = max(row["apply"]["cpu_s_per_img"], 1e-6)
                measured = max(8 * runs, min(int(runs * min_seconds / per_image), BUILD_BYTES // (3 * size * size)))
                warm = _break_even(size) + 8 if name in TABLED else 8
                plan = json.dumps({name: [warm, measured]})
                row["build"] = _cell(_child("build", str(size), plan, *common)[name]["runs"])
                for srv in servers:
                    replies = [srv.ask(name, severity) for _ in range(runs)]
                    if any("error" in r for r in replies):
                        row[srv.impl] = {"error": next(r["error"] for r in replies if "error" in r)}
                    else:
                        row[srv.impl] = _cell([{"cpu": r["cpu"] / r["calls"], "regime": None} for r in replies])
                rows[name] = row
                print(f"{size:4d} {name:18s} " + "  ".join(f"{k} {1e3 * v['cpu_s_per_img']:.3f}"
                      for k, v in row.items() if "cpu_s_per_img" in v), file=sys.stderr, flush=True)  # fmt: skip
        finally:
            for srv in servers:
                srv.close()
        results.append({"size": size, "family": FAMILY_FOR_SIZE[size], "rows": rows})
    load.append(os.getloadavg()[0])
    return {"severity": severity, "runs": runs, "min_seconds": min_seconds, "sizes": results, "machine": machine(load)}


def _break_even(size: int) -> int:
    from corruptgen.families.imagenet_c._hsv_table import break_even

    return break_even(size * size)


# ------------------------------------------------------------------------------------------------ the table
def _ms(cell: dict | None) -> str:
    if not cell:
        return "–"
    if "error" in cell:
        return "fails"
    mark = {"table": " ᵗ", "kernel": " ᵏ", "mixed": " ᵐ"}.get(cell.get("regime"), "")
    return f"{1e3 * cell['cpu_s_per_img']:.3f}{mark}"


def table(result: dict) -> str:
    head = (f"CPU ms per image, severity {result['severity']}, median of {result['runs']} runs (≥ "
            f"{result['min_seconds']} s each on the fly), one thread per process; ")  # fmt: skip
    lines = [head + describe_machine(result["machine"])]
    slow, behind, behind_worker = [], [], []
    for block in result["sizes"]:
        size = block["size"]
        lines += ["", f"**{size}×{size}** (`{block['family']}`)", "",
                  "| corruption | worker (RandomCorruption in a DataLoader) | apply (fresh process) | build "
                  "| worker ÷ build | apply ÷ build | imagecorruptions | corrupt-tta | fastest peer ÷ apply |",
                  "|---" * 9 + "|"]  # fmt: skip
        for name, row in block["rows"].items():
            worker, apply, build = (row[p]["cpu_s_per_img"] for p in ("worker", "apply", "build"))
            slow += [f"{name} {p} at {size}" for p, t in (("worker", worker), ("apply", apply)) if t > 1.1 * build]
            peers = [row[p]["cpu_s_per_img"] for p in PEERS if "cpu_s_per_img" in row.get(p, {})]
            versus = "–"
            if peers:
                versus = f"{min(peers) / apply:.2f}×"
                behind += [f"{name} at {size}"] if min(peers) < apply else []
                behind_worker += [f"{name} at {size}"] if min(peers) < worker else []
            lines.append(f"| {name} | {_ms(row['worker'])} | {_ms(row['apply'])} | {_ms(row['build'])} | "
                         f"{worker / build:.2f}× | {apply / build:.2f}× | {_ms(row.get(PEERS[0]))} | "
                         f"{_ms(row.get(PEERS[1]))} | {versus} |")  # fmt: skip
    lines += ["", "ᵗ / ᵏ: brightness and saturate through their exact colour table (after the break-even of "
              "`imagenet_c/_hsv_table.py`, reached in the warm-up) / the exact kernel. The peers run in a tight loop "
              "in their own process, as apply does; the worker and build columns include what runs between the "
              "calls (collating and sending batches; encoding and writing shards).", "",
              f"on the fly more than 1.1× the build: {', '.join(slow) or 'none'}", "",
              f"a peer ahead of apply: {', '.join(behind) or 'none'}; of the worker path: "
              f"{', '.join(behind_worker) or 'none'}"]  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="run", choices=["run", "table", "apply", "worker", "build"])
    parser.add_argument("args", nargs="*", help="table: a saved result (the other modes are the script's children)")
    parser.add_argument("--sizes", default="224,32")
    parser.add_argument("--names", default=",".join(NAMES))
    parser.add_argument("--severity", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=0.5)
    parser.add_argument("--peer-python", default=None, help="python of the virtual environment holding the peers")
    parser.add_argument("--out", default=None)
    parser.add_argument("--doc", default=None)
    args = parser.parse_args()
    if args.mode == "table":
        print(table(json.loads(Path(args.args[0]).read_text())))
        return 0
    if args.mode in ("apply", "worker", "build"):
        size, what, severity, runs = int(args.args[0]), args.args[1], int(args.args[2]), int(args.args[3])
        min_seconds = float(args.args[4])
        if args.mode == "apply":
            out = child_apply(size, what, severity, runs, min_seconds)
        elif args.mode == "worker":
            out = child_worker(size, what, severity, runs, min_seconds)
        else:
            out = child_build(size, json.loads(what), severity, runs)
        print(json.dumps(out))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [n for n in args.names.split(",") if n]
    result = measure(sizes, names, args.severity, args.runs, args.min_seconds, args.peer_python)
    publish(result, table(result), REGION, args.out, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

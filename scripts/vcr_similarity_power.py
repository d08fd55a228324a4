#!/usr/bin/env python
"""How often ``corruptgen analyze vcr-similarity`` calls two corruption functions different (docs/vcr.md, "Visually
similar functions"): false alarms and power by simulation.

Human-like accuracy curves f_t(v) = 0.95 / (1 + e^{(v − t)/0.05}) with the turning point t. Each replicate draws four
independent trial tables of N trials (Δv ~ U(0, 1), right with probability f_t(Δv), the accuracy on the originals
measured on the same N trials, right with probability f_t(0)): two with t = 0.6 (the same truth), one with t = 0.65
and one with t = 0.7, fits their curves as ``vcr-similarity`` does (``vcr_curve``, default settings: 500 resamples)
and compares the first with each of the others. The rate of "differ" is the false-alarm rate (same truth) and the
power (shift 0.05, 0.10) of each rule:

* **simultaneous** (default of ``vcr-similarity``): the sup over Δv of the standardised difference against its 95 %
  bootstrap quantile (one 5 % test of the whole curve);
* **pointwise** (``--bands pointwise``): any Δv whose difference alone is significant at 5 % (the paper's 83 % rule
  applied point by point);
* **83 % simultaneous bands overlap**: any Δv where the two sup-t 83 % bands do not overlap.

Replicates are seeded by (N, index), independent of ``--workers``.

    python scripts/vcr_similarity_power.py [--replicates 200] [--sizes 2000,5000] [--workers 2]
        [--out docs/bench/vcr_similarity_power.json] [--doc docs/vcr.md]
    python scripts/vcr_similarity_power.py table docs/bench/vcr_similarity_power.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import describe_machine, machine, publish

REGION = "vcr-similarity-power"
BASE, SHIFTS = 0.6, (0.0, 0.05, 0.10)
RULES = ("simultaneous", "pointwise", "bands overlap")


def one_replicate(task: tuple[int, int]) -> dict:
    """Rules' verdicts for the pairs (same truth, shift 0.05, shift 0.10) of one replicate."""
    import numpy as np

    from corruptgen.eval.metrics.vcr import vcr_curve
    from corruptgen.eval.vcr_similarity import compare_curves

    n, index = task
    rng = np.random.default_rng([n, index])

    def fit(t: float, name: str) -> dict:
        dv = rng.uniform(0, 1, n)
        correct = rng.uniform(0, 1, n) < 0.95 / (1 + np.exp((dv - t) / 0.05))
        anchor = rng.binomial(n, 0.95 / (1 + np.exp(-t / 0.05))) / n
        return vcr_curve(dv, correct, anchor, anchor_n=n, key=f"power/{index}/{name}")

    ref = fit(BASE, "ref")
    out = {}
    for shift in SHIFTS:
        other = fit(BASE + shift, f"{shift}")
        a, b = ref["band"]["simultaneous"], other["band"]["simultaneous"]
        apart = (np.array(a["lo"]) > np.array(b["hi"]) + 1e-9) | (np.array(b["lo"]) > np.array(a["hi"]) + 1e-9)
        out[str(shift)] = {"simultaneous": not compare_curves(ref, other)["similar"],
                           "pointwise": not compare_curves(ref, other, kind="pointwise")["similar"],
                           "bands overlap": bool(apart.any())}  # fmt: skip
    return out


def run(replicates: int, sizes: list[int], workers: int) -> dict:
    import numpy as np

    tasks = [(n, i) for n in sizes for i in range(replicates)]
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    load0 = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    with mp.get_context("spawn").Pool(workers) as pool:
        done = pool.map(one_replicate, tasks, chunksize=2)
        pool.close()
        pool.join()  # the workers exit: their CPU time is in RUSAGE_CHILDREN
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = []
    for n in sizes:
        got = [d for (nn, _), d in zip(tasks, done, strict=True) if nn == n]
        for rule in RULES:
            rates = {str(s): float(np.mean([d[str(s)][rule] for d in got])) for s in SHIFTS}
            rows.append({"n": n, "rule": rule, "replicates": len(got), "rates": rates})
    return {"rows": rows, "replicates": replicates, "sizes": sizes, "workers": workers,
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(time.process_time() - cpu + child.ru_utime + child.ru_stime, 1),
            "machine": machine([load0, os.getloadavg()[0]])}  # fmt: skip


def table(result: dict) -> str:
    """The page region: one row per N and rule."""
    lines = ["| N trials per function | rule | replicates | false alarms (same curve) | power: turning point +0.05 | "
             "power: +0.10 |", "|---:|---|---:|---|---|---|"]  # fmt: skip
    for r in result["rows"]:
        k = r["replicates"]
        cells = [f"{p:.3f} ± {(p * (1 - p) / k) ** 0.5:.3f}" for p in (r["rates"][str(s)] for s in SHIFTS)]
        lines.append(f"| {r['n']:,} | {r['rule']} | {k} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"`python scripts/vcr_similarity_power.py --replicates {result['replicates']} --sizes "
                 f"{','.join(map(str, result['sizes']))} --workers {result['workers']}`: {result['wall_s']:,.0f} s "
                 f"wall, {result['cpu_s']:,.0f} CPU-s; {describe_machine(result['machine'])}.")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*", help="table: a saved result")
    ap.add_argument("--replicates", type=int, default=200, help="replicates per N")
    ap.add_argument("--sizes", default="2000,5000", help="N, comma-separated")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--doc", default=None, help=f"also write the table into this page's region '{REGION}'")
    args = ap.parse_args()
    if args.mode == "table":
        result = json.loads(Path(args.files[0]).read_text())
    else:
        result = run(args.replicates, [int(v) for v in args.sizes.split(",")], args.workers)
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

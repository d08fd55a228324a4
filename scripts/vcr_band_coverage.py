#!/usr/bin/env python
"""How often the VCR bands hold a known curve (docs/vcr.md, "Bands"): coverage by simulation.

For each known accuracy curve f (a mid drop, 0.9/(1 + e^{(v−0.5)/0.08}), and a late one, 0.95/(1 + e^{(v−0.8)/0.04}))
and each size N: ``--datasets`` synthetic tables of N images with Δv ~ U(0, 1), each right with probability f(Δv),
the anchor measured on N clean images (right with probability f(0)). Each table is fitted by
``corruptgen.eval.metrics.vcr.vcr_curve`` with the default settings (40 bins, L = 20, λ = 3e-4, 500 resamples, 83 %)
and its bands are checked against f on the curve's 101-point grid:

* **simultaneous**: the share of tables whose sup-t band holds f at every grid point (target 0.83), with its
  binomial standard error;
* **pointwise**: the mean over grid points of the share of tables whose pointwise band holds f(v) (target 0.83), the
  smallest per-point share and the Δv ranges where it falls under 0.75 (smoothing bias: the fit cuts the corners of
  a drop), and the same for the percentile band of the same refits (what an uncentred bootstrap band gives);
* the default bands are ``band_bias_aware="auto"`` (bias-aware from 3,000 images on); the plain sup-t bands
  (``band_bias_aware=False``) and the bias-aware ones (``True``) of the same refits beside them;
* the mean half-widths of the bands.

Tables are independent of the worker count (each one seeded by its curve, N and index); the tables run in
``--workers`` processes (spawned, one thread each).

    python scripts/vcr_band_coverage.py [--datasets 200] [--sizes 1000,2000,3000,5000] [--workers 2]
        [--out docs/bench/vcr_band_coverage.json] [--doc docs/vcr.md]
    python scripts/vcr_band_coverage.py table docs/bench/vcr_band_coverage.json   # the table of a saved run
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

REGION = "vcr-band-coverage"
CURVES = {"mid drop": (0.9, 0.5, 0.08), "late drop": (0.95, 0.8, 0.04)}  # height, turning point, scale
BELOW = 0.75


def known(v, curve: str):
    import numpy as np

    top, mid, scale = CURVES[curve]
    return top / (1 + np.exp((np.asarray(v, dtype=np.float64) - mid) / scale))


def one_table(task: tuple[str, int, int]) -> dict:
    """Bands of one synthetic table against the truth: per-grid-point hits and widths."""
    import numpy as np

    from corruptgen.eval.metrics.vcr import PLOT_GRID, vcr_curve
    from corruptgen.eval.metrics.vcr_bands import bands

    curve, n, index = task
    rng = np.random.default_rng([list(CURVES).index(curve), n, index])
    dv = rng.uniform(0, 1, n)
    correct = rng.uniform(0, 1, n) < known(dv, curve)
    anchor = rng.binomial(n, float(known(0.0, curve))) / n
    c = vcr_curve(dv, correct, anchor, anchor_n=n, key=f"coverage/{index}")
    truth, band = known(PLOT_GRID, curve), c["band"]
    lo, hi = np.array(band["lo"]), np.array(band["hi"])
    slo, shi = np.array(band["simultaneous"]["lo"]), np.array(band["simultaneous"]["hi"])
    plo, phi = np.percentile(c["_refits"], [50 * (1 - band["level"]), 50 * (1 + band["level"])], axis=0)
    aware = bands(c["_refits"], c["_spline"](PLOT_GRID), band["level"], bias_aware=True)
    plain = bands(c["_refits"], c["_spline"](PLOT_GRID), band["level"], bias_aware=False)
    eps = 1e-9
    return {"pointwise": ((lo - eps <= truth) & (truth <= hi + eps)).tolist(),
            "plain": ((plain.lo - eps <= truth) & (truth <= plain.hi + eps)).tolist(),
            "plain_simultaneous": bool(np.all((plain.simultaneous_lo - eps <= truth)
                                              & (truth <= plain.simultaneous_hi + eps))),
            "default_bias_aware": bool(band["bias_aware"]),
            "percentile": ((plo - eps <= truth) & (truth <= phi + eps)).tolist(),
            "bias_aware": ((aware.lo - eps <= truth) & (truth <= aware.hi + eps)).tolist(),
            "bias_aware_simultaneous": bool(np.all((aware.simultaneous_lo - eps <= truth)
                                                   & (truth <= aware.simultaneous_hi + eps))),
            "bias_width": float(np.mean(aware.hi - aware.lo) / 2),
            "bias_simultaneous_width": float(np.mean(aware.simultaneous_hi - aware.simultaneous_lo) / 2),
            "simultaneous": bool(np.all((slo - eps <= truth) & (truth <= shi + eps))),
            "width": float(np.mean(hi - lo) / 2), "simultaneous_width": float(np.mean(shi - slo) / 2)}  # fmt: skip


def _ranges(share, grid) -> list[list[float]]:
    out, start = [], None
    for i, low in enumerate([*list(share < BELOW), False]):
        if low and start is None:
            start = i
        elif not low and start is not None:
            out.append([round(float(grid[start]), 2), round(float(grid[i - 1]), 2)])
            start = None
    return out


def run(datasets: int, sizes: list[int], workers: int) -> dict:
    import numpy as np

    from corruptgen.eval.metrics.vcr import PLOT_GRID

    tasks = [(c, n, i) for c in CURVES for n in sizes for i in range(datasets)]
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    load0 = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    with mp.get_context("spawn").Pool(workers) as pool:
        done = pool.map(one_table, tasks, chunksize=4)
        pool.close()
        pool.join()  # the workers exit: their CPU time is in RUSAGE_CHILDREN
    child_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = []
    for c in CURVES:
        for n in sizes:
            got = [d for (cc, nn, _), d in zip(tasks, done, strict=True) if (cc, nn) == (c, n)]
            pw = np.mean([d["pointwise"] for d in got], axis=0)
            pc = np.mean([d["percentile"] for d in got], axis=0)
            ba = np.mean([d["bias_aware"] for d in got], axis=0)
            pl = np.mean([d["plain"] for d in got], axis=0)
            sim = float(np.mean([d["simultaneous"] for d in got]))
            bsim = float(np.mean([d["bias_aware_simultaneous"] for d in got]))
            rows.append({"curve": c, "n": n, "datasets": len(got), "simultaneous": sim,
                         "simultaneous_se": float(np.sqrt(sim * (1 - sim) / len(got))),
                         "pointwise_mean": float(pw.mean()), "pointwise_min": float(pw.min()),
                         "pointwise_min_at": float(PLOT_GRID[pw.argmin()]), "pointwise_below": _ranges(pw, PLOT_GRID),
                         "percentile_mean": float(pc.mean()), "percentile_min": float(pc.min()),
                         "percentile_below": _ranges(pc, PLOT_GRID),
                         "default_bias_aware": float(np.mean([d["default_bias_aware"] for d in got])),
                         "plain_simultaneous": float(np.mean([d["plain_simultaneous"] for d in got])),
                         "plain_mean": float(pl.mean()), "plain_min": float(pl.min()),
                         "plain_below": _ranges(pl, PLOT_GRID),
                         "bias_aware_mean": float(ba.mean()), "bias_aware_min": float(ba.min()),
                         "bias_aware_below": _ranges(ba, PLOT_GRID),
                         "bias_aware_half_width": float(np.mean([d["bias_width"] for d in got])),
                         "bias_aware_simultaneous": bsim,
                         "bias_aware_simultaneous_half_width": float(np.mean([d["bias_simultaneous_width"]
                                                                              for d in got])),
                         "half_width": float(np.mean([d["width"] for d in got])),
                         "simultaneous_half_width": float(np.mean([d["simultaneous_width"] for d in got])),
                         })  # fmt: skip
    return {"rows": rows, "datasets": datasets, "sizes": sizes, "workers": workers,
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(time.process_time() - cpu + child_cpu.ru_utime + child_cpu.ru_stime, 1),
            "machine": machine([load0, os.getloadavg()[0]])}  # fmt: skip


def table(result: dict) -> str:
    """The page region: one row per curve and N."""

    def pw(r: dict, key: str) -> str:
        below = ", ".join(f"{a:.2f}–{b:.2f}" for a, b in r[f"{key}_below"]) or "none"
        return f"{r[f'{key}_mean']:.3f} / {r[f'{key}_min']:.2f}; {below}"

    lines = ["| curve | N | tables | default band (bias-aware?) — simultaneous: whole curve held (± s.e.) | "
             f"default band — pointwise: mean / min; under {BELOW} at Δv | plain sup-t: simultaneous; pointwise | "
             "bias-aware: simultaneous; pointwise | percentile band of the refits: pointwise | "
             "half-widths: default pointwise / simultaneous; bias-aware |",
             "|---|---:|---:|---|---|---|---|---|---|"]  # fmt: skip
    for r in result["rows"]:
        which = {0.0: "plain", 1.0: "bias-aware"}.get(r.get("default_bias_aware", 0.0), "mixed")
        lines.append(f"| {r['curve']} | {r['n']:,} | {r['datasets']} | ({which}) {r['simultaneous']:.3f} ± "
                     f"{r['simultaneous_se']:.3f} | {pw(r, 'pointwise')} | {r['plain_simultaneous']:.3f}; "
                     f"{pw(r, 'plain')} | {r['bias_aware_simultaneous']:.3f}; {pw(r, 'bias_aware')} | "
                     f"{pw(r, 'percentile')} | {r['half_width']:.3f} / "
                     f"{r['simultaneous_half_width']:.3f}; {r['bias_aware_half_width']:.3f} / "
                     f"{r['bias_aware_simultaneous_half_width']:.3f} |")  # fmt: skip
    lines.append("")
    lines.append(f"`python scripts/vcr_band_coverage.py --datasets {result['datasets']} --sizes "
                 f"{','.join(map(str, result['sizes']))} --workers {result['workers']}`: {result['wall_s']:,.0f} s "
                 f"wall, {result['cpu_s']:,.0f} CPU-s; {describe_machine(result['machine'])}.")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*", help="table: a saved result")
    ap.add_argument("--datasets", type=int, default=200, help="tables per curve and N")
    ap.add_argument("--sizes", default="1000,2000,3000,5000", help="N, comma-separated")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--doc", default=None, help=f"also write the table into this page's region '{REGION}'")
    args = ap.parse_args()
    if args.mode == "table":
        result = json.loads(Path(args.files[0]).read_text())
    else:
        result = run(args.datasets, [int(v) for v in args.sizes.split(",")], args.workers)
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

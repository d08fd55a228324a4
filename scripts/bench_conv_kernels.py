#!/usr/bin/env python
"""Which oneDNN implementation torch runs for baseline D's convolution, and what it costs, per kernel size.

Baseline D of ``corruptgen bench`` (the OpticsBench reference generator's loop) is one ``F.conv2d`` per image and
colour channel: a 1-channel 224×224 image with a K×K kernel, zero 'same' padding. For each K, a fresh process with one
torch thread and ``ONEDNN_VERBOSE=1`` makes one warm-up call and ``--calls`` timed calls; the table gives oneDNN's
implementation (from its verbose ``exec`` lines: ``jit:avx2`` is vectorised, ``ref:any`` the plain C++ reference
loop) and the median CPU-ms per call (``process_time``), with torch's CPU capability line.

    python scripts/bench_conv_kernels.py [--calls 3] [--out docs/bench/conv_kernels.json] [--doc docs/benchmarks.md]
    python scripts/bench_conv_kernels.py table docs/bench/conv_kernels.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import describe_machine, machine, publish

SIZES = (7, 11, 13, 17, 21, 25)
REGION = "conv-kernels"
_CHILD = """
import json, statistics, sys, time
import torch, torch.nn.functional as F
torch.set_num_threads(1)
k, calls = int(sys.argv[1]), int(sys.argv[2])
x, w = torch.rand(1, 1, 224, 224), torch.rand(1, 1, k, k)
F.conv2d(x, w, padding="same")
times = []
for _ in range(calls):
    t = time.process_time()
    F.conv2d(x, w, padding="same")
    times.append(time.process_time() - t)
print("RESULT " + json.dumps({"ms": 1e3 * statistics.median(times),
                               "capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__}))
"""


def measure(calls: int) -> dict:
    load = [os.getloadavg()[0]]
    env = {**os.environ, "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1"}
    rows = []
    for k in SIZES:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(k), str(calls)], env=env, capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
        impls = {line.split(",exec,cpu,convolution,")[1].split(",")[0] for line in out.splitlines()
                 if ",exec,cpu,convolution," in line}  # fmt: skip
        result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        rows.append({"kernel": k, "implementation": sorted(impls), **result})
    load.append(os.getloadavg()[0])
    return {"machine": machine(load), "calls": calls, "rows": rows}


def table(result: dict) -> str:
    first = result["rows"][0]
    lines = [
        f"1-channel 224×224 `F.conv2d`, 'same' padding, one torch thread, median of {result['calls']} calls after a "
        f"warm-up; torch {first['torch']}, CPU capability {first['capability']}; {describe_machine(result['machine'])}",
        "",
        "| kernel | oneDNN implementation | CPU ms per convolution |",
        "|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(f"| {row['kernel']}×{row['kernel']} | `{', '.join(row['implementation']) or '?'}` | "
                     f"{row['ms']:.1f} |")  # fmt: skip
    last = result["rows"][-1]
    lines.append(f"\nWith {last['kernel']}×{last['kernel']} kernels baseline D makes three such calls per image: "
                 f"{3 * last['ms'] / 1e3:.2f} CPU-s per image.")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--doc", default=None)
    args = ap.parse_args()
    result = json.loads(Path(args.files[0]).read_text()) if args.mode == "table" else measure(args.calls)
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

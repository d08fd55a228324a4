#!/usr/bin/env python
"""Run the benchmark scripts of docs/benchmarks.md twice each and write their outputs into the page.

Every command of :data:`COMMANDS` runs twice, one after the other, in its own process with one thread
(``OMP_NUM_THREADS=1``; each script also pins its torch/OpenCV threads). The result (``--out``, default
``docs/bench/scripts.json``; ``--only`` replaces those commands' entries and keeps the others) keeps both outputs
and, per command, the machine (CPU model, cores, instruction-set flags, load average before and after) and the date;
the page region ``scripts`` shows each command, the output of its first run and how
far apart the two runs were: every number of the second output divided by the same number of the first (the two
outputs have the same text around their numbers), as the median and the largest relative difference.

    python scripts/bench_docs.py [--only NAME,...] [--out docs/bench/scripts.json] [--doc docs/benchmarks.md]
    python scripts/bench_docs.py table docs/bench/scripts.json     # the region's text of a saved run

``python scripts/bench_docs.py all`` is the one command behind every number of docs/benchmarks.md and
docs/cifar_c.md: these scripts, then ``bench_floor.py``, ``bench_cifar_render.py``, ``bench_conv_kernels.py`` and
``bench_hsv_table.py`` (the peer tables and ``bench_on_the_fly.py`` need the peers' virtual environment: see
``bench_peers.py``'s docstring).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, child_env, describe_machine, machine, publish

#: region entries: name, what the script compares, its command (relative to the repository root)
COMMANDS = (
    ("syn2nat", "full engine vs a bare loop of the same corruption functions",
     ["scripts/bench_syn2nat.py", "--images", "20"]),
    ("imagenet-c", "per-corruption speed vs the NumPy transcription of the reference",
     ["scripts/bench_imagenet_c.py", "--severities", "3", "--repeats", "3"]),
    ("vif", "batched torch VIF vs single-image pyrtools and sewar implementations",
     ["scripts/bench_vif.py", "--baseline-n", "16"]),
    ("optics", "batched PSF convolution vs the reference's per-image, per-channel conv2d loop",
     ["scripts/bench_optics.py", "--images", "8", "--engine-images", "0"]),
    ("eval", "evaluate() vs a bare forward loop over pre-decoded tensors",
     ["scripts/bench_eval.py", "--images", "64"]),
    ("pipeline", "pipelined chunk schedule (--io-threads) vs the serial one, shards compared",
     ["scripts/bench_pipeline.py", "--copies", "4", "--threads", "2"]),
    ("card", "CPU cost of the dataset card (96-subset build) vs main",
     ["scripts/bench_card.py", "--inputs", "50", "--repeats", "3"]),
    ("startup", "CPU-seconds of corruptgen start-up (list, build imports)",
     ["scripts/startup_cpu.py", "--runs", "5"]),
    ("attacks", "PGD-10 of corruptgen vs torchattacks 3.5.1 on EfficientNet-Lite0, both batch layouts",
     ["scripts/bench_attacks.py", "--batch-size", "8", "--repeats", "5", "--threads", "1"]),
)  # fmt: skip
REGION = "scripts"
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?")
#: what ``all`` runs: script -> (the name of its saved result in docs/bench/, the pages it writes its region into)
ALL = {"bench_docs.py": ("scripts", "docs/benchmarks.md"), "bench_floor.py": ("floor", "docs/benchmarks.md"),
       "bench_cifar_render.py": ("cifar_render", "docs/benchmarks.md,docs/cifar_c.md"),
       "bench_conv_kernels.py": ("conv_kernels", "docs/benchmarks.md"),
       "bench_hsv_table.py": ("hsv_table", "docs/benchmarks.md")}  # fmt: skip


def run(commands: list[tuple[str, str, list[str]]], out: str) -> dict:
    """Each command twice; the result, merged with the entries of other commands already saved in ``out``."""
    env = child_env()
    results = []
    for name, what, command in commands:
        load, outputs = [os.getloadavg()[0]], []
        for attempt in (1, 2):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True)
            text = done.stdout.strip() if done.returncode == 0 else f"failed (exit {done.returncode}): " + \
                done.stderr.strip()[-800:]  # fmt: skip
            outputs.append({"output": text, "wall_s": round(time.perf_counter() - start, 1)})
            print(f"{name} run {attempt}: {outputs[-1]['wall_s']} s", file=sys.stderr, flush=True)
        load.append(os.getloadavg()[0])
        results.append({"name": name, "what": what, "command": command, "runs": outputs, "machine": machine(load)})
    before = json.loads(Path(out).read_text()) if Path(out).is_file() else {"results": []}
    saved = [{"machine": before.get("machine"), **r} for r in before["results"]]  # older files: one machine for all
    fresh = {r["name"]: r for r in results}
    order = [name for name, _, _ in COMMANDS]
    merged = sorted([*(r for r in saved if r["name"] not in fresh), *results], key=lambda r: order.index(r["name"]))
    return {"results": merged}


def _skeleton(text: str) -> str:
    """The text around the numbers: numbers, runs of spaces and temporary paths made alike."""
    return " ".join(_NUMBER.sub("#", re.sub(r"/tmp/\S+", "<tmp>", text)).split())


def spread(first: str, second: str) -> str:
    """How far apart two outputs of one command are: each number of ``second`` ÷ the same number of ``first``."""
    if _skeleton(first) != _skeleton(second):
        return "the two outputs differ in their text: compare them in the saved JSON"
    ratios = []
    numbers = [_NUMBER.findall(re.sub(r"/tmp/\S+", "", text)) for text in (first, second)]
    for a, b in zip(*numbers, strict=True):
        x, y = float(a.replace(",", "")), float(b.replace(",", ""))
        if x > 0 and y > 0 and a != b:
            ratios.append(abs(y / x - 1))
    if not ratios:
        return "the second run printed the same numbers"
    return (f"second run vs first: numbers {100 * statistics.median(ratios):.0f} % apart (median), "
            f"{100 * max(ratios):.0f} % at most")  # fmt: skip


def table(result: dict) -> str:
    """The page region: the machine, then per command its purpose, command line, first output and spread."""
    lines = ["One thread per process (`OMP_NUM_THREADS=1`).", ""]
    for r in result["results"]:
        first, second = (run["output"] for run in r["runs"])
        where = describe_machine(r["machine"])
        lines += [f"**{r['name']}**: {r['what']} ({spread(first, second)}; {where}).", "", "```text",
                  "$ python " + " ".join(r["command"]), first, "```", ""]  # fmt: skip
    return "\n".join(lines).rstrip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table", "all"])
    ap.add_argument("files", nargs="*", help="table: a saved result")
    ap.add_argument("--only", default=None, help="comma-separated names of COMMANDS")
    ap.add_argument("--out", default=str(ROOT / "docs/bench/scripts.json"))
    ap.add_argument("--doc", default="docs/benchmarks.md")
    args = ap.parse_args()
    if args.mode == "all":
        for script, (stem, docs) in ALL.items():
            subprocess.run([sys.executable, f"scripts/{script}", "--out", f"docs/bench/{stem}.json", "--doc", docs],
                           cwd=ROOT, check=True)  # fmt: skip
        return 0
    if args.mode == "table":
        result = json.loads(Path(args.files[0]).read_text())
    else:
        names = set(args.only.split(",")) if args.only else None
        result = run([c for c in COMMANDS if names is None or c[0] in names], args.out)
    run_mode = args.mode == "run"
    publish(result, table(result), REGION, args.out if run_mode else None, args.doc if run_mode else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""CPU-seconds (user + sys) of corruptgen's start-up, each command in a fresh process: ``corruptgen list`` and
one-image builds of single families (the whole command: start-up plus one image), with ``import numpy, cv2`` as the
floor every command pays. Medians of ``--runs`` runs; the commands of every set are interleaved run by run, so load
on a shared machine hits them alike. One thread for BLAS/OpenMP (``OMP_NUM_THREADS=1`` and friends).

    python scripts/startup_cpu.py [--runs 7] [--baseline REF]

``--baseline REF`` also runs every command with that git ref's package (exported with ``git archive``, its cards and
kernels inside it, and put first on ``PYTHONPATH``; e.g. ``HEAD~1``) and prints both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import child_env, export_tree

from corruptgen.bench.timing import run_child

FLOOR = ["-c", "import numpy, cv2"]
COMMANDS = {
    "import numpy, cv2 (floor)": FLOOR,
    "corruptgen list": ["-m", "corruptgen", "list"],
    "build imagenet-c, 1 image": ["-m", "corruptgen", "build", "imagenet-c", "--subsets", "gaussian_noise",
                                  "--severities", "1", "--limit", "1", "--no-card", "--no-progress", "--out", "{out}"],
    "build syn2nat solarize, 1 image": ["-m", "corruptgen", "build", "syn2nat", "--subsets", "solarize", "--limit",
                                        "1", "--no-card", "--no-progress", "--out", "{out}"],
}  # fmt: skip


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """user + sys CPU-seconds of ``python argv`` in a fresh process, run in an empty folder made and removed here
    (its ``{out}``): a source tree in the working directory would shadow ``PYTHONPATH``."""
    out = tempfile.mkdtemp(prefix="startup-")
    child = run_child([sys.executable, *(a.replace("{out}", out) for a in argv)], env=env, cwd=out)
    shutil.rmtree(out)
    child.done.check_returncode()
    return child.cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", default=None, metavar="REF", help="a git ref of this repository to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-baseline-") as tmp:
        sets = {"this tree": child_env()}
        if args.baseline:
            sets = {"baseline": child_env(export_tree(args.baseline, Path(tmp))), **sets}
        measure(sets, args.runs)


def measure(sets: dict[str, dict[str, str]], runs: int) -> None:
    """Print the median CPU-seconds of every command under every environment of ``sets``, interleaved."""
    times: dict[tuple[str, str], list[float]] = {(s, c): [] for s in sets for c in COMMANDS}
    for _ in range(runs):
        for command, argv in COMMANDS.items():
            for name, env in sets.items():
                times[name, command].append(cpu_seconds(argv, env))
    print(f"CPU-seconds (user+sys), median of {runs} fresh processes, 1 BLAS/OpenMP thread, {os.cpu_count()} CPUs")
    print(f"{'command':34s}" + "".join(f"{name:>12s}" for name in sets))
    for command in COMMANDS:
        print(f"{command:34s}" + "".join(f"{statistics.median(times[n, command]):12.2f}" for n in sets))


if __name__ == "__main__":
    main()

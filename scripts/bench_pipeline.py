"""Pipelined vs serial chunk schedule (issue G): samples/s of one chunk task and whether the shards are identical.

The serial schedule decodes, corrupts and encodes one input after the other; the pipelined one
(:mod:`corruptgen.pipeline`, ``--io-threads N``) decodes ahead and encodes behind on N threads. Both run in this
process on the same inputs (the sample photos copied ``--copies`` times into a temporary folder), alternating
``--repeats`` times; the shards' sha256 must be equal.

    python scripts/bench_pipeline.py [--family opticsbench] [--subsets defocus_disk_s3] [--threads 2,4] [--device cpu]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corruptgen
from corruptgen.bench.stages import materialize_inputs
from corruptgen.chunk import ChunkTask
from corruptgen.pipeline import render_chunk


def _digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.tar")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", default="opticsbench")
    ap.add_argument("--subsets", default="defocus_disk_s3")
    ap.add_argument("--threads", default="2,4", help="io_threads values to compare with the serial schedule")
    ap.add_argument("--copies", type=int, default=20, help="copies of the 10 sample photos (inputs = 10 x copies)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = materialize_inputs("samples", 10 * args.copies, tmp / "in")
        n = inputs.count
        plan = corruptgen.make_plan(args.family, source=inputs.spec, subsets=args.subsets, clean=False)
        names = tuple(s.name for s in plan.subsets)
        schedules = [0, *(int(t) for t in args.threads.split(","))]
        times: dict[int, list[float]] = {t: [] for t in schedules}
        digests: dict[int, dict[str, str]] = {}
        for r in range(args.repeats):
            for threads in schedules:
                out = tmp / f"out-{threads}-{r}"
                task = ChunkTask(plan, str(out), 0, 0, n, names, args.device, args.batch_size, threads)
                t0 = time.perf_counter()
                render_chunk(task)
                times[threads].append(time.perf_counter() - t0)
                digests[threads] = _digests(out)
        samples = n * len(names)
        base = statistics.median(times[0])
        print(f"{args.family} {args.subsets}: {n} inputs, {samples} samples, device {args.device}")
        for threads in schedules:
            t = statistics.median(times[threads])
            label = "serial" if threads == 0 else f"pipelined, {threads} io threads"
            same = digests[threads] == digests[0]
            print(f"  {label:28s} {samples / t:8.1f} samples/s  {base / t:5.2f}x serial  identical shards: {same}")


if __name__ == "__main__":
    main()

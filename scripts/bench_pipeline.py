"""Pipelined vs serial chunk schedule (issue G): samples/s of one chunk task and whether the shards are identical.

The serial schedule decodes, corrupts and encodes one input after the other; the pipelined one
(:mod:`corruptgen.engine.pipeline`, ``--io-threads N``) decodes ahead and encodes behind on N threads. Both run in this
process on the same inputs (the sample photos copied ``--copies`` times into a temporary folder), alternating
``--repeats`` times; the shards' sha256 must be equal. One render of the chunk takes seconds, so each repeat is one
render (``--min-seconds`` repeats it within a run; default 0.5); a warm-up render precedes them; medians are printed
with CPU-seconds per sample (this process: the io threads included) and the thread settings (``--torch-threads``).

    python scripts/bench_pipeline.py [--family opticsbench] [--subsets defocus_disk_s3] [--threads 2,4] [--device cpu]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corruptgen
from corruptgen.bench.stages import materialize_inputs
from corruptgen.bench.timing import describe_threads, fix_threads, time_work
from corruptgen.engine.chunk import ChunkTask
from corruptgen.engine.options import RenderOptions
from corruptgen.engine.pipeline import render_chunk


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
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--torch-threads", type=int, default=1, help="torch intra-op and OpenCV threads (default 1)")
    args = ap.parse_args()
    threads_info = fix_threads(args.torch_threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = materialize_inputs("samples", 10 * args.copies, tmp / "in")
        n = inputs.count
        plan = corruptgen.make_plan(args.family, source=inputs.spec, subsets=args.subsets, clean=False)
        names = tuple(s.name for s in plan.subsets)
        schedules = [0, *(int(t) for t in args.threads.split(","))]
        samples = n * len(names)
        digests: dict[int, dict[str, str]] = {}
        records: dict[int, dict] = {}
        for threads in schedules:
            counter = {"runs": 0}

            def render_once(threads=threads, counter=counter) -> int:
                counter["runs"] += 1
                out = tmp / f"out-{threads}-{counter['runs']}"
                options = RenderOptions(device=args.device, batch_size=args.batch_size, io_threads=threads)
                render_chunk(ChunkTask(plan, str(out), 0, 0, n, names, options))
                digests[threads] = _digests(out)
                return samples

            records[threads] = time_work(render_once, runs=args.repeats, min_seconds=args.min_seconds)
        base = records[0]["images_per_s"]
        print(f"{args.family} {args.subsets}: {n} inputs, {samples} samples, device {args.device}; median of "
              f"{args.repeats} runs >= {args.min_seconds} s after a warm-up")  # fmt: skip
        print(describe_threads(threads_info))
        for threads in schedules:
            r = records[threads]
            label = "serial" if threads == 0 else f"pipelined, {threads} io threads"
            same = digests[threads] == digests[0]
            print(f"  {label:28s} {r['images_per_s']:8.1f} samples/s {r['cpu_s_per_image']:8.5f} CPU-s/sample "
                  f"{r['images_per_s'] / base:5.2f}x serial  identical shards: {same}")  # fmt: skip


if __name__ == "__main__":
    main()

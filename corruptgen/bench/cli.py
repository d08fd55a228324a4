"""``corruptgen bench``: images/s per stage of each family, end to end, and the baselines of issues A–E."""

from __future__ import annotations

import json
import sys

from ..commands import register_commands
from ..errors import CorruptgenError
from ..io.atomic import write_atomic
from .stages import FAMILIES


@register_commands("bench")
def add_commands(sub) -> dict:
    p = sub.add_parser(
        "bench",
        help="images/s per stage (decode, corrupt, vif, encode, write) and end to end, vs the A-E baselines",
        description="Runs each family's stages on the same inputs and prints images/s per stage (decode = read + "
        "decode + preprocess, corrupt, vif (VCR: the batched VIF evaluations), encode, write = tar shards), end to "
        "end (a real build into a temporary directory, samples/s), the baselines of issues A-E measured in the same "
        "run on the same images, the ratios ours / baseline (images/s; > 1: ours faster) and the peak RSS.",
    )
    p.add_argument("--families", default=None,
                   help=f"comma-separated, from {','.join(FAMILIES)} (default: all)")  # fmt: skip
    p.add_argument("--source", default="samples", help="any source the build command accepts (default samples)")
    p.add_argument("--images", default=None, help="inputs, the source cycled (default: the source, at most 10)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    p.add_argument("--batch-size", default="64", help="batch size of batched corruptions, VIF and eval (default 64)")
    p.add_argument("--io-threads", type=int, default=None, help="end-to-end builds: decode/encode threads")
    p.add_argument(
        "--repeats",
        default="3",
        help="timed runs per measurement, each >= 0.5 s after a warm-up; the median is reported (default 3)",
    )
    p.add_argument(
        "--threads",
        default="1",
        help="torch intra-op and OpenCV threads for every measurement (default 1; stated in the output)",
    )
    p.add_argument("--min-seconds", type=float, default=0.5,
                   help="each timed run repeats its work until this many seconds passed (default 0.5)")  # fmt: skip
    p.add_argument("--json", default=None, metavar="FILE|-", help="write the result as JSON to FILE, or '-': stdout")
    return {"bench": _cmd_bench}


def _positive(flag: str, text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise CorruptgenError(f"{flag} expects a positive integer, got {text!r}") from None
    if value < 1:
        raise CorruptgenError(f"{flag} expects a positive integer, got {value}")
    return value


def _cmd_bench(args) -> int:
    from . import format_table, parse_families, run_bench

    families = parse_families(args.families)
    images = _positive("--images", args.images)
    batch_size = _positive("--batch-size", args.batch_size)
    repeats = _positive("--repeats", args.repeats)
    threads = _positive("--threads", args.threads)
    to_stdout = args.json == "-"

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def save(result: dict) -> None:  # after each family too: a run cut short keeps what it measured
        write_atomic(args.json, (json.dumps(result, indent=1, allow_nan=False) + "\n").encode("utf-8"))

    keep = bool(args.json) and not to_stdout
    result = run_bench(families, source=args.source, images=images, device=args.device, batch_size=batch_size,
                       repeats=repeats, io_threads=args.io_threads, threads=threads, min_run_s=args.min_seconds,
                       progress=progress, on_family=save if keep else None)  # fmt: skip
    if to_stdout:
        print(json.dumps(result, indent=1, allow_nan=False))
        return 0
    print(format_table(result))
    if keep:
        save(result)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0

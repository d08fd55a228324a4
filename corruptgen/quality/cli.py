"""``corruptgen vif CLEAN CORRUPTED [--pixel]``: VIF and VCR's perceived change Δv of one image pair;
``corruptgen coverage BUILD``: the per-subset Δv coverage of a build (VCR §4.1); ``corruptgen coverage BUILD_A
BUILD_B``: the Δv distributions of the functions two builds share (VCR App. D, Fig. 11)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..commands import register_commands
from ..errors import CorruptgenError
from .coverage import MAX_COMPUTED


@register_commands("quality")
def add_commands(sub) -> dict:
    p = sub.add_parser(
        "vif",
        help="VIF (VCR's steerable-pyramid variant) and delta_v = max(0, 1 - VIF) of a clean/corrupted pair",
        description="Prints the visual information fidelity of CORRUPTED against CLEAN and VCR's perceived change "
        "delta_v = max(0, 1 - VIF), one per line. Both images must have the same size (at least 72x72 px); colour "
        "images are converted to gray like OpenCV's RGB2GRAY.",
    )
    p.add_argument("clean", help="reference image file")
    p.add_argument("corrupted", help="distorted image file")
    p.add_argument("--pixel", action="store_true", help="pixel-domain VIF-P (sewar/Sheikh) instead: NOT VCR's VIF")
    p.add_argument("--float32", action="store_true", help="compute in float32 (faster, ~1e-4 from float64)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    _add_coverage(sub)
    return {"vif": _cmd_vif, "coverage": _cmd_coverage}


def _add_coverage(sub) -> None:
    p = sub.add_parser(
        "coverage",
        help="per-subset delta_v coverage of a build (40 equal bins, covered with >= 20 images) + histogram PNG; "
        "with two builds, their shared functions' delta_v distributions overlaid (VCR Fig. 11)",
        description="Reads every corrupted subset of a build directory and reports how its perceived change "
        "delta_v = max(0, 1 - VIF) covers [0, 1]: 40 equal bins, a bin is covered when it holds at least 20 images "
        "(VCR, Shen et al. WACV 2025, section 4.1). Samples that store delta_v (VCR builds) are read as they are; "
        "for the others (e.g. an ImageNet-C build) delta_v is computed against the clean subset's image with the "
        "same source_key (at most --max-computed samples per subset). With two builds (e.g. an imagenet-c and a vcr "
        "build) the corruptions are pooled per function and the functions both builds share are compared: each "
        "one's N and coverage, and the two histograms as percentages of images overlaid (VCR App. D, Fig. 11).",
    )
    p.add_argument("directory", nargs="+", metavar="BUILD", help="one build directory, or two to compare")
    p.add_argument("--subsets", default=None, help="comma-separated subsets (default: every corrupted subset)")
    p.add_argument(
        "--by",
        choices=("subset", "corruption"),
        default="subset",
        help="one row per subset (default) or per corruption (pools e.g. ImageNet-C's 5 severities)",
    )
    p.add_argument("--bins", type=int, default=40, help="equal delta_v bins on [0, 1] (default 40)")
    p.add_argument("--min-count", type=int, default=20, help="images for a bin to count as covered (default 20)")
    p.add_argument("--plot", default=None, help="histogram PNG path (default: <directory>/delta_v_coverage.png; "
                   "two builds: <first>/delta_v_comparison.png)")  # fmt: skip
    p.add_argument("--no-plot", action="store_true", help="do not write the histogram PNG")
    p.add_argument("--json", default=None, help="also write the table (with per-bin counts) as JSON to this path")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] for computing missing delta_v")
    p.add_argument("--max-computed", type=int, default=MAX_COMPUTED, metavar="N",
                   help=f"compute delta_v for at most N evenly spaced samples per subset (default {MAX_COMPUTED}; "
                   "0 = all); stored delta_v is always read")  # fmt: skip


def _read(path: str, role: str) -> np.ndarray:
    from ..io.decode import BadImageError, decode_image

    file = Path(path)
    if not file.exists():
        raise CorruptgenError(f"{role} image not found: {path}")
    if not file.is_file():
        raise CorruptgenError(f"{role} image is not a file: {path}")
    try:
        image, _ = decode_image(file.read_bytes())
    except BadImageError as e:
        raise CorruptgenError(f"cannot read {role} image {path}: {e.reason}") from None
    return image


def _cmd_vif(args) -> int:
    import torch

    from .steerable import MIN_SIZE
    from .vif import vif
    from .vifp import vif_p

    clean, corrupted = _read(args.clean, "clean"), _read(args.corrupted, "corrupted")
    if clean.shape != corrupted.shape:
        (h0, w0), (h1, w1) = clean.shape[:2], corrupted.shape[:2]
        raise CorruptgenError(f"size mismatch: clean image is {w0}x{h0}, corrupted image is {w1}x{h1} (WxH)")
    min_side = 41 if args.pixel else MIN_SIZE
    if min(clean.shape[:2]) < min_side:
        h, w = clean.shape[:2]
        raise CorruptgenError(
            f"images are {w}x{h}; VIF{'-P' if args.pixel else ''} needs at least {min_side} px a side"
        )
    try:
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise CorruptgenError("--device cuda requested but CUDA is not available")
    except RuntimeError as e:
        raise CorruptgenError(f"bad --device {args.device!r}: {e}") from None
    dtype = torch.float32 if args.float32 else torch.float64
    measure = vif_p if args.pixel else vif
    value = measure(clean, corrupted, device=device, dtype=dtype)
    print(f"{'VIF-P' if args.pixel else 'VIF'}: {value:.6f}")
    print(f"delta_v: {max(0.0, 1.0 - value):.6f}")
    return 0


def _cmd_coverage(args) -> int:
    import json
    import sys

    from .coverage import format_table, plot, scan

    if len(args.directory) > 2:
        raise CorruptgenError("coverage takes one build, or two to compare")
    if args.max_computed < 0:
        raise CorruptgenError("--max-computed must be >= 0")
    at_most = args.max_computed or None
    if len(args.directory) == 2:
        return _compare(args, at_most)
    args.directory = args.directory[0]
    names = None
    if args.subsets is not None:
        names = [n.strip() for n in args.subsets.split(",") if n.strip()]
        if not names:
            raise CorruptgenError("--subsets is empty")
    rows = scan(args.directory, subsets=names, by=args.by, bins=args.bins, min_count=args.min_count, device=args.device,
                progress=lambda name: print(f"reading {name} ...", file=sys.stderr), max_computed=at_most,
                note=lambda line: print(f"corruptgen: note: {line}", file=sys.stderr))  # fmt: skip
    print(format_table(rows))
    if not args.no_plot:
        target = Path(args.plot) if args.plot else Path(args.directory) / "delta_v_coverage.png"
        print(f"histograms: {plot(rows, target, title=str(Path(args.directory).resolve().name))}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_dict() for r in rows], indent=1) + "\n")
        print(f"json: {args.json}")
    return 0


def _compare(args, at_most: int | None) -> int:
    import json
    import sys

    from .coverage_compare import compare_builds, format_comparison, plot_comparison

    if args.subsets is not None or args.by != "subset":
        flag = "--subsets" if args.subsets is not None else "--by"
        raise CorruptgenError(f"{flag} applies to one build; two builds are compared per function")
    a, b = args.directory

    def progress(name: str) -> None:
        print(f"reading {name} ...", file=sys.stderr)

    labels, rows, only = compare_builds(a, b, bins=args.bins, min_count=args.min_count, max_computed=at_most,
                                        device=args.device, progress=progress)  # fmt: skip
    if not rows:
        raise CorruptgenError(f"{labels[0]} and {labels[1]} share no corruption function")
    print(format_comparison(labels, rows))
    for label, names in only.items():
        if names:
            print(f"only in {label}: {', '.join(names)}")
    if not args.no_plot:
        target = Path(args.plot) if args.plot else Path(a) / "delta_v_comparison.png"
        print(f"histograms: {plot_comparison(labels, rows, target)}")
    if args.json:
        data = {"builds": labels, "functions": [r.to_dict(labels) for r in rows], "only": only}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
        print(f"json: {args.json}")
    return 0

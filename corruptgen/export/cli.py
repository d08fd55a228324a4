"""``corruptgen export BUILD --layout imagenet-c --out DIR`` (wired by :mod:`corruptgen.cli`)."""

from __future__ import annotations

import json
import sys

from ..commands import register_commands


@register_commands("export")
def add_commands(sub) -> dict:
    p = sub.add_parser("export", help="write a build as a folder tree (the ImageNet-C layout RobustBench reads)")
    p.add_argument("build", nargs="?", help="a build directory, an fsspec URL or a Hub dataset hf:owner/name")
    p.add_argument("--out", help="the folder to write (made if missing)")
    p.add_argument("--layout", default="imagenet-c", help="the folder layout (default imagenet-c; see --layouts)")
    p.add_argument("--subsets", default=None, help="comma-separated subset names (default: every subset)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a layout option, e.g. class-dirs=wnid (repeatable)")  # fmt: skip
    p.add_argument(
        "--link-dest",
        action="append",
        default=[],
        metavar="DIR",
        help="an earlier export: files identical to the file at the same path there are hard-linked",
    )
    p.add_argument("--overwrite", action="store_true", help="replace files that hold other bytes (never deletes)")
    p.add_argument("--allow-nonempty", action="store_true", help="write into a non-empty folder of other files")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--layouts", action="store_true", help="list the registered layouts and exit")
    return {"export": _cmd_export}


def _cmd_export(args) -> int:
    from ..errors import CorruptgenError
    from .api import export_build
    from .layouts import LAYOUTS

    if args.layouts:
        for name, layout in LAYOUTS.items():
            opts = "".join(f"\n    --option {k}=...: {h}" for k, h in layout.options.items())
            print(f"{name:14s} {layout.summary}{opts}")
        return 0
    if not args.build or not args.out:
        raise CorruptgenError("export needs a build and --out DIR, e.g. corruptgen export corruptgen-out/imagenet-c "
                              "--out ImageNet-C")  # fmt: skip
    report = export_build(args.build, args.out, layout=args.layout, subsets=args.subsets, options=args.option,
                          overwrite=args.overwrite, allow_nonempty=args.allow_nonempty, link_dest=args.link_dest,
                          progress=args.progress and sys.stderr.isatty())  # fmt: skip
    print(json.dumps(report.to_json(), indent=1) if args.json else report.summary())
    return 0 if report.ok else 1

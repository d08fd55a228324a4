"""``corruptgen gallery BUILD [--out DIR] [--per-subset N] [--results FILE ...] [--serve]``."""

from __future__ import annotations

from ..commands import positive_int, register_commands


@register_commands("gallery")
def add_commands(sub) -> dict:
    p = sub.add_parser(
        "gallery",
        help="a static web page of a build's samples (grid of corruption x severity, viewer, facts)",
        description="Writes a static site (index.html, no server needed) showing a few samples of every subset of a "
        "build beside the clean images, with the build's facts; --results adds a model's accuracy and marks each "
        "thumbnail correct or wrong. Image files are named by the sha256 of the stored bytes and written once.",
    )
    p.add_argument("build", help="a build directory, an fsspec URL or a Hub dataset id (owner/name)")
    p.add_argument(
        "--out",
        default=None,
        help="the site's folder (default: <build>-gallery next to a local build, ./<name>-gallery for a remote one)",
    )
    p.add_argument("--per-subset", type=positive_int, default=3, help="thumbnails per cell (default 3)")
    p.add_argument(
        "--results",
        nargs="+",
        default=[],
        metavar="FILE",
        help="results-<model>.json files of `corruptgen eval` on this build",
    )
    p.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="do not re-hash the shards (the facts then say the build was not verified)",
    )
    p.add_argument("--serve", action="store_true", help="then serve the site on 127.0.0.1 until Ctrl-C")
    p.add_argument("--port", type=int, default=0, help="--serve: the port (default: a free one)")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    return {"gallery": _cmd_gallery}


def _cmd_gallery(args) -> int:
    import sys

    from . import gallery

    result = gallery(
        args.build,
        args.out,
        per_subset=args.per_subset,
        results=args.results,
        verify=args.verify,
        progress=args.progress and sys.stderr.isatty(),
    )
    print(result.summary())
    if result.refused:
        print(f"corruptgen: note: {result.refused}", file=sys.stderr)
    if args.serve:
        from .serve import serve

        return serve(result.out, args.port)
    return 0

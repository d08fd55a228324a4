"""``export_build``: open a build, pick its subsets and hand them to a registered layout."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence

from ..engine.reader import Build
from ..errors import UnknownNameError
from .layouts import LAYOUTS
from .outdir import ExportDir, ExportReport


def export_build(
    build: str | os.PathLike | Build,
    out: str | os.PathLike,
    *,
    layout: str = "imagenet-c",
    subsets: str | Sequence[str] | None = None,
    options: Mapping[str, str] | Sequence[str] | None = None,
    overwrite: bool = False,
    allow_nonempty: bool = False,
    link_dest: Sequence[str | os.PathLike] = (),
    progress: bool = False,
) -> ExportReport:
    """Write the build's samples as the folder tree of ``layout`` under ``out``; returns what was done.

    Args:
        build: a build directory, an fsspec URL or a Hub dataset id (anything :meth:`Build.open` reads), or a Build.
        out: the local folder to write (made if missing).
        layout: a registered layout (``imagenet-c``: ``<corruption>/<severity>/<wnid>/<key>.JPEG``).
        subsets: subset names (comma-separated or a list) or ``"all"``; default every subset with samples.
        options: the layout's own options (``{"class-dirs": "wnid"}`` or ``["class-dirs=wnid"]``).
        overwrite: replace files that hold other bytes (default: leave them and report them as conflicts).
        allow_nonempty: write into a non-empty folder that holds no corruptgen export (nothing there is deleted).
        link_dest: earlier export folders: a file identical to the one at the same relative path there is
            hard-linked to it instead of written.

    Example:
        >>> report = export_build("corruptgen-out/imagenet-c", "ImageNet-C")  # doctest: +SKIP
        >>> print(report.summary())  # doctest: +SKIP
    """
    opened = build if isinstance(build, Build) else Build.open(build)
    chosen = LAYOUTS.get(layout)
    opts = chosen.parse_options(options)
    names = select_subsets(opened, subsets)
    report = ExportReport(layout=chosen.name, build=opened.location, out=str(out), subsets=names)
    if opened.manifest and not opened.manifest.get("complete", True):
        report.notes.append("the build is incomplete (interrupted): exported what it holds; finish the build and "
                            "export again to add the rest")  # fmt: skip
    record = {"build": opened.location, "benchmark": opened.benchmark, "plan_id": opened.manifest.get("plan_id"),
              "options": opts}  # fmt: skip
    with ExportDir(out, report, overwrite=overwrite, allow_nonempty=allow_nonempty, link_dest=link_dest,
                   record=record, progress=progress) as target:  # fmt: skip
        report.out = str(target.root)
        chosen.fn(opened, target, names, opts)
        for refused in opened.refused:  # what the reader left out: a member over its limit, an unreadable shard
            target.skip(refused.subset, refused.key or refused.shard,
                        refused.reason if refused.key else f"every sample of the shard: {refused.reason}")  # fmt: skip
    return report


def select_subsets(build: Build, subsets: str | Sequence[str] | None) -> list[str]:
    """The named subsets in plan order (unknown names fail with near names); default: those with samples."""
    wanted = [s.strip() for s in subsets.split(",")] if isinstance(subsets, str) else [str(s) for s in subsets or ()]
    wanted = [s for s in wanted if s]
    if not wanted or wanted == ["all"]:
        return build.configs()
    known = build.subset_names()
    for name in wanted:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(near)}?" if near else f"it has: {', '.join(known)}"
            raise UnknownNameError(f"the build has no subset {name!r}; {hint}")
    return [n for n in known if n in wanted]

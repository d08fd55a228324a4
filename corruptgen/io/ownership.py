"""What in a build directory corruptgen wrote, and the only deletions a build makes there.

A build deletes nothing it cannot prove is its own:

* leftover partial files only under the exact names its shard writer and manifest writer use
  (``data/<subset>/.<shard>.tar.partial`` beside a shard path of the plan or the manifest, ``.manifest.json.partial``);
* with ``--overwrite``, only shard files the manifest records, then the folders that this left empty.

Every other file (a user's ``data/mine/results.csv``, ``notes/.draft.partial``) is kept and, on ``--overwrite``,
listed as kept. A ``data/`` (or ``data/<subset>/``) that is a symbolic link is refused rather than written through.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import CorruptgenError
from .atomic import partial_path
from .storage import Location

_SHOWN = 3  # file names shown in the one-line summary


def refuse_symlinks(root: Path, subsets: Iterable[str]) -> None:
    """Fail in one line if ``data/`` or a ``data/<subset>/`` folder of the build is a symbolic link."""
    for rel in ("data", *(f"data/{name}" for name in subsets)):
        if (root / rel).is_symlink():
            target = os.readlink(root / rel)
            raise CorruptgenError(
                f"{root / rel} is a symbolic link (to {target}); corruptgen does not write or delete through links: "
                "point --out at the real folder"
            )


def remove_stale_partials(root: Path, rels: Iterable[str]) -> int:
    """Delete the partial files a killed build left beside the given paths (shards, ``manifest.json``); how many."""
    removed = 0
    for rel in set(rels):
        partial = partial_path(root / rel)
        if partial.is_symlink() or partial.is_file():
            partial.unlink()
            removed += 1
    return removed


def delete_recorded(
    out: Path | Location, doomed: Iterable[str], ours: Iterable[str], announce: Callable[[str], None]
) -> None:
    """Delete the recorded shard files ``doomed`` (paths under ``out``), first telling ``announce`` in one line what
    goes and which files are kept. ``ours`` are all paths the manifest records; any other file under ``data/`` is
    kept."""
    doomed, ours = sorted(set(doomed)), set(ours)
    if isinstance(out, Location):
        present = {rel: out.size(rel) or 0 for rel in doomed if out.exists(rel)}
        others = [rel for rel in out.find("data", "") if rel not in ours]
    else:
        present = {rel: (out / rel).lstat().st_size for rel in doomed if (out / rel).is_file()}
        others = [rel for rel in _files(out / "data", out) if rel not in ours and not _partial_of(rel, ours)]
    line = (
        f"--overwrite: deleting {_count(len(present), 'shard')} ({_size(sum(present.values()))}) of the earlier build"
    )
    line += f" ({_names(list(present))})" if present else ""
    if others:
        line += f"; keeping {_count(len(others), 'file')} corruptgen did not write ({_names(others)})"
    announce(line)
    if isinstance(out, Location):
        if present:
            out.fs.rm([out.path(rel) for rel in present])
        return
    for rel in present:
        (out / rel).unlink()
    for folder in sorted({(out / rel).parent for rel in present}, reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # a subset folder this emptied


def _files(folder: Path, root: Path) -> list[str]:
    """Every file (or link) below ``folder`` as a path relative to ``root``, without following links."""
    found = []
    for here, dirs, files in os.walk(folder):
        base = Path(here)
        found += [(base / f).relative_to(root).as_posix() for f in files]
        found += [(base / d).relative_to(root).as_posix() for d in dirs if (base / d).is_symlink()]
    return sorted(found)


def _partial_of(rel: str, ours: set[str]) -> bool:
    head, _, name = rel.rpartition("/")
    return name.startswith(".") and name.endswith(".partial") and f"{head}/{name[1 : -len('.partial')]}" in ours


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} bytes"
    scaled, unit = next((n / 1000**k, u) for k, u in ((3, "GB"), (2, "MB"), (1, "kB")) if n >= 1000**k)
    return f"{scaled:.1f} {unit}"


def _names(rels: list[str]) -> str:
    shown = ", ".join(rels[:_SHOWN])
    return shown + (f", ... {len(rels) - _SHOWN} more" if len(rels) > _SHOWN else "")

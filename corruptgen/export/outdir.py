"""The export's output folder: every file a layout writes goes through :class:`ExportDir`.

Rules it keeps for every layout:

* **atomic** -- a file is written to ``.<name>.corruptgen-part`` beside it and renamed into place, so an interrupted
  export never leaves a truncated image under a real name; an existing file is never opened for writing, so a file
  hard-linked elsewhere is never changed through this folder;
* **idempotent, resumable** -- a file that already holds the same bytes is left untouched (counted ``identical``);
  re-running an interrupted export finishes it;
* **never deletes or silently replaces** -- a file with other bytes is a *conflict*, left as it is and reported,
  unless ``overwrite`` (then it is replaced atomically); files the export does not name are never touched;
* **no surprises** -- a non-empty folder that holds no corruptgen export (no ``.corruptgen-export.json``) is refused
  unless ``allow_nonempty``;
* **hard links** -- with ``link_dest`` folders (earlier exports, rsync's ``--link-dest`` rule), a file whose bytes
  equal the file at the same relative path there is hard-linked to it instead of written.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import posixpath
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import CorruptgenError
from ..io.storage import is_url

MARKER = ".corruptgen-export.json"
PART_SUFFIX = ".corruptgen-part"
_SHOWN = 20  # conflicts / skipped examples kept in the report
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES, getattr(errno, "ENOTSUP", -1), errno.EOPNOTSUPP}


@dataclass
class ExportReport:
    """What an export did. ``files`` counts written / replaced / linked / identical / conflict files."""

    layout: str
    build: str
    out: str
    subsets: list[str]
    folders: dict[str, str] = field(default_factory=dict)
    files: Counter = field(default_factory=Counter)
    conflicts: list[str] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    skipped_examples: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every file of the export holds the build's bytes (no conflict left)."""
        return not self.files["conflict"]

    def summary(self) -> str:
        f = self.files
        total = f["written"] + f["replaced"] + f["linked"] + f["identical"]
        lines = [
            f"exported {_plural(total, 'file')} from {self.build} ({_plural(len(self.subsets), 'subset')}) to "
            f"{self.out} in the {self.layout} layout: {f['written']} written, {f['linked']} hard-linked, "
            f"{f['identical']} already there" + (f", {f['replaced']} replaced" if f["replaced"] else "")
        ]
        for reason, n in self.skipped.items():
            lines.append(f"skipped {_plural(n, 'sample')}: {reason}")
        if f["conflict"]:
            shown = ", ".join(self.conflicts[:3])
            holds = "holds" if f["conflict"] == 1 else "hold"
            lines.append(f"{_plural(f['conflict'], 'file')} {holds} other bytes and were left as they are "
                         f"({shown}, ...); --overwrite replaces them")  # fmt: skip
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    def to_json(self) -> dict[str, Any]:
        return {"layout": self.layout, "build": self.build, "out": self.out, "subsets": self.subsets,
                "folders": self.folders, "files": dict(self.files), "conflicts": self.conflicts,
                "skipped": dict(self.skipped), "skipped_examples": self.skipped_examples,
                "notes": self.notes}  # fmt: skip


class ExportDir:
    """The output folder of one export (a context manager): layouts call :meth:`put` / :meth:`open`,
    :meth:`skip`, :meth:`note` and :meth:`folder`; see the module docstring for the rules it keeps."""

    def __init__(self, root: str | os.PathLike, report: ExportReport, *, overwrite: bool = False,
                 allow_nonempty: bool = False, link_dest: Sequence[str | os.PathLike] = (),
                 record: dict[str, Any] | None = None, progress: bool = False) -> None:  # fmt: skip
        if is_url(str(root)):
            raise CorruptgenError(f"export writes a local folder, not {root}")
        self.root = Path(root).expanduser().absolute()
        self.report = report
        self.overwrite = overwrite
        self.allow_nonempty = allow_nonempty
        self.link_dest = [Path(d).expanduser().absolute() for d in link_dest]
        self.record = record or {}
        self.progress = progress
        self._lock: int | None = None
        self._bar: Any = None
        for d in self.link_dest:
            if not d.is_dir():
                raise CorruptgenError(f"--link-dest {d}: not a folder")

    # ------------------------------------------------------------------ the folder
    def __enter__(self) -> ExportDir:
        if self.root.exists() and not self.root.is_dir():
            raise CorruptgenError(f"--out {self.root} exists and is not a folder")
        if not (self.root / MARKER).is_file() and _non_empty(self.root) and not self.allow_nonempty:
            raise CorruptgenError(
                f"{self.root} is not empty and holds no corruptgen export; pass --allow-nonempty to export into it "
                "(files there are never deleted; files with other bytes are reported)"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        self._write_marker(complete=False)
        if self.progress:
            from tqdm.auto import tqdm

            self._bar = tqdm(desc="exporting", unit="file", leave=False)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._bar is not None:
            self._bar.close()
        try:
            if exc_type is None:
                self._write_marker(complete=True)
        finally:
            if self._lock is not None:
                os.close(self._lock)  # closing releases the lock

    def _acquire_lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory lock
            return
        fd = os.open(self.root, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise CorruptgenError(f"another export is writing to {self.root}; wait for it to finish") from None
        self._lock = fd

    def _write_marker(self, *, complete: bool) -> None:
        """``.corruptgen-export.json``: one entry per (build, layout) exported here, replaced on re-export."""
        path = self.root / MARKER
        try:
            entries = json.loads(path.read_text())["exports"] if path.is_file() else []
        except (ValueError, KeyError, TypeError, OSError):
            entries = []
        entry = {**self.record, "layout": self.report.layout, "subsets": self.report.subsets,
                 "folders": self.report.folders, "files": dict(self.report.files), "complete": complete}  # fmt: skip
        same = (entry.get("build"), entry.get("plan_id"), entry["layout"])
        entries = [e for e in entries if (e.get("build"), e.get("plan_id"), e.get("layout")) != same] + [entry]
        tmp = path.with_name(MARKER + PART_SUFFIX)
        tmp.write_text(json.dumps({"corruptgen_export": 1, "exports": entries}, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)

    # ------------------------------------------------------------------ what layouts call
    def folder(self, subset: str, where: str) -> None:
        """Record where ``subset`` goes (shown in the report and the marker)."""
        self.report.folders[subset] = where

    def note(self, text: str) -> None:
        """A one-line remark for the report (said once however often it is noted)."""
        if text not in self.report.notes:
            self.report.notes.append(text)

    def skip(self, subset: str, key: str, reason: str) -> None:
        """A sample not exported, with its reason (counted per reason; the first few kept as examples)."""
        self.report.skipped[reason] += 1
        if len(self.report.skipped_examples) < _SHOWN:
            self.report.skipped_examples.append({"subset": subset, "key": key, "reason": reason})

    def put(self, rel: str, data: bytes) -> str:
        """Write ``data`` to ``rel`` (a POSIX path below the folder); returns what happened: ``written``,
        ``replaced``, ``linked``, ``identical`` or ``conflict``. Unsafe paths (absolute, ``..``, ``\\``) raise
        ValueError."""
        target = self._target(rel)
        state = _compare(target, data)
        if state != "absent" and (state != "conflict" or not self.overwrite):
            return self._count(state, rel)
        tmp = self._fresh_tmp(target)
        linked = self._link(rel, data, tmp)
        if not linked:
            with open(tmp, "xb") as f:
                f.write(data)
        os.replace(tmp, target)
        return self._count("linked" if linked else "replaced" if state == "conflict" else "written", rel)

    @contextlib.contextmanager
    def open(self, rel: str) -> Iterator[IO[bytes]]:
        """A binary file to stream a large file into (e.g. a ``.npy`` array); on leaving the block the same rules
        as :meth:`put` apply (identical files are kept, conflicts reported). The outcome is in ``report.files``."""
        target = self._target(rel)
        tmp = self._fresh_tmp(target)
        try:
            with open(tmp, "xb") as f:
                yield f
            state = _compare(target, tmp)
            if state != "absent" and (state != "conflict" or not self.overwrite):
                self._count(state, rel)
                return
            os.replace(tmp, target)
            self._count("replaced" if state == "conflict" else "written", rel)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    # ------------------------------------------------------------------ internals
    def _target(self, rel: str) -> Path:
        norm = posixpath.normpath(rel)
        if not rel or posixpath.isabs(rel) or norm == "." or norm == ".." or norm.startswith("../") or "\\" in rel:
            raise ValueError(f"unsafe export path {rel!r}")
        return self.root.joinpath(*norm.split("/"))

    @staticmethod
    def _fresh_tmp(target: Path) -> Path:
        """The part file beside ``target`` (its folder made); a stale one (an interrupted run) is removed first,
        never written through (it may be a hard link to another export's file)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}{PART_SUFFIX}")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        return tmp

    def _link(self, rel: str, data: bytes, tmp: Path) -> bool:
        for dest in list(self.link_dest):
            candidate = dest.joinpath(*rel.split("/"))
            if _compare(candidate, data) != "identical":
                continue
            try:
                os.link(candidate, tmp)
                return True
            except OSError as e:
                if e.errno not in _NO_LINK:
                    raise
                self.link_dest.remove(dest)
                self.note(f"cannot hard-link from {dest} ({e.strerror}); its files are copied instead")
        return False

    def _count(self, state: str, rel: str) -> str:
        state = "conflict" if state == "blocked" else state
        self.report.files[state] += 1
        if state == "conflict" and len(self.report.conflicts) < _SHOWN:
            self.report.conflicts.append(rel)
        if self._bar is not None:
            self._bar.update(1)
        return state


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _non_empty(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    with os.scandir(folder) as entries:
        return any(True for _ in entries)


def _compare(path: Path, data: bytes | Path) -> str:
    """What is at ``path`` compared with ``data`` (bytes, or the file ``data``): ``absent``, ``identical``,
    ``conflict`` (a file with other bytes: ``overwrite`` may replace it) or ``blocked`` (a folder, or a file where a
    parent folder should be: never replaced)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "absent"
    except NotADirectoryError:
        return "blocked"
    if not os.path.isfile(path):
        return "blocked"
    size = len(data) if isinstance(data, bytes) else os.stat(data).st_size
    if st.st_size != size:
        return "conflict"
    if isinstance(data, bytes):
        with open(path, "rb") as f:
            return "identical" if f.read() == data else "conflict"
    import filecmp

    return "identical" if filecmp.cmp(path, data, shallow=False) else "conflict"

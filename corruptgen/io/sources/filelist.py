"""``filelist:<list.txt>[:<root>]`` source: exactly the images a text file lists, in list order.

The list format is RobustBench's (its 5,000-image ImageNet-C evaluation list ``imagenet_test_image_ids.txt``): one
path per line relative to a root, ``n01440764/ILSVRC2012_val_00000293.JPEG``, joined to the root as written (only the
line ending is removed; blank lines are ignored). The root defaults to the list's own folder. Labels come from the
paths exactly as for ``imagefolder:`` (``<wnid>/<file>`` gives the fixed ImageNet-1k index; generic class folders are
indexed among the root's folders), never from the set of lines that happened to be usable.

A listed file that is missing, a path that leaves the root (absolute, or ``..`` above it), a repeated line and a
wnid outside ImageNet-1k stay in the item list and are skipped by the build with their reason (counted in the
manifest; the first lines are named on stderr when the source is opened), so the build is exactly the list.
"""

from __future__ import annotations

import os
import posixpath

from corruptgen.errors import CorruptgenError
from corruptgen.io.shown import shown_path

from . import register_source
from .base import (
    Source,
    SourceItem,
    _path_keys,
    _read_file,
    _unique_keys,
    build_dir_above,
    refuse_build_dir,
    shown_file_and,
    split_file,
)
from .imagefolder import ImageFolderSource


class FileListSource(ImageFolderSource):
    """The files a list names, relative to ``root`` (labels by :class:`ImageFolderSource`'s rules)."""

    kind = "filelist"
    shown_rest = staticmethod(shown_file_and)

    def __init__(self, spec: str, list_path: str, root: str | None = None, *, limit: int | None = None) -> None:
        self.list_given = list_path
        self.list_path = os.path.abspath(os.path.expanduser(list_path))
        super().__init__(spec, root or os.path.dirname(self.list_path), limit=limit)
        self.missing = 0

    def _scan(self) -> list[SourceItem]:
        if not os.path.isdir(self.root):
            raise CorruptgenError(f"filelist: root is not a directory: {self.path}")
        refuse_build_dir(self.root, f"filelist: root {self.path}")
        lines = _read_list(self.list_path)
        if not lines:
            raise CorruptgenError(f"filelist: {self.list_path} lists no paths")
        rels, first_line, builds = [], {}, {}
        for number, line in lines:
            rel, problem = _check_path(line)
            if problem is None and rel in first_line:
                problem = f"listed twice (first on line {first_line[rel]})"
            if problem is None and "/" in rel:
                inside = build_dir_above(os.path.join(self.root, os.path.dirname(rel)), self.root, builds)
                where = None if inside is None else os.path.relpath(inside, self.root).replace(os.sep, "/")
                problem = None if inside is None else f"inside the corruptgen build directory {where}: never read"
            if problem is None:
                first_line[rel] = number
                if not os.path.isfile(os.path.join(self.root, *rel.split("/"))):
                    self.problems[len(rels)] = f"file not found: {rel}"  # so far: the missing files
            rels.append((number, rel, problem))
        good = [i for i, (_, _, problem) in enumerate(rels) if problem is None]
        if not good:
            raise CorruptgenError(f"filelist: no usable path in {self.list_path}: {rels[0][2]} (line {rels[0][0]})")
        self.missing = len(self.problems)
        if self.missing == len(good):
            raise CorruptgenError(
                f"filelist: none of the {len(good)} listed files exists under {self.root}; "
                "pass the folder the paths are relative to: filelist:<list>:<root>"
            )
        good_rels = [rels[i][1] for i in good]
        labels = dict(zip(good, self._labels(good_rels, _folders(self.root)), strict=True))
        keys = dict(zip(good, _path_keys(good_rels), strict=True))
        unlabelled = self._unlabelled(good_rels, [labels[i] for i in good])
        refused = {i: problem for i, (_, _, problem) in enumerate(rels) if problem is not None}
        self.problems = refused | {good[j]: reason for j, reason in unlabelled.items()} | self.problems
        self.notes = _skipped_lines([(rels[i][0], rels[i][1], self.problems[i]) for i in sorted(self.problems)])
        ids = [rel if i in keys else f"line {number}: {_shown_line(rel)}" for i, (number, rel, _) in enumerate(rels)]
        raw_keys = [keys.get(i, f"line{number}") for i, (number, _, _) in enumerate(rels)]
        final = _unique_keys(raw_keys, ids)
        return [SourceItem(final[i], ids[i], *labels.get(i, (None, None))) for i in range(len(rels))]

    def _read(self, index: int, max_bytes: int) -> bytes:
        rel = self._items[index].source_id
        return _read_file(os.path.join(self.root, *rel.split("/")), rel, max_bytes)

    def identity(self, index: int) -> str:
        problem = self.problems.get(index)
        return f"refused: {problem}" if problem is not None else super().identity(index)

    def _describe_extra(self) -> dict:
        return {**super()._describe_extra(), "list": shown_path(self.list_given), "refused": len(self.problems),
                "missing": self.missing}  # fmt: skip


def _shown_line(line: str) -> str:
    """A refused line as recorded: an absolute path, or one leaving the root, by its last component."""
    parts = line.replace("\\", "/").split("/")
    absolute = line.startswith(("/", "\\")) or os.path.isabs(line) or (len(line) > 1 and line[1] == ":")
    return parts[-1] if absolute or ".." in parts else line


def _folders(root: str) -> list[str]:
    """The root's visible sub-folders: the classes of a generic class-folder list (as ``imagefolder:<root>``)."""
    try:
        return [e.name for e in os.scandir(root) if not e.name.startswith(".") and e.is_dir()]
    except OSError:
        return []


def _skipped_lines(skipped: list[tuple[int, str, str]], shown: int = 5) -> list[str]:
    """The scan's notes on the lines the build skips: the first ``shown`` with number and reason, then a count."""
    notes = [f"filelist: line {number} ({rel}) is skipped: {reason}" for number, rel, reason in skipped[:shown]]
    if len(skipped) > shown:
        notes.append(f"filelist: {len(skipped) - shown} more lines are skipped (reasons in manifest.json 'skipped')")
    return notes


def _read_list(path: str) -> list[tuple[int, str]]:
    """(line number, text) of the non-blank lines; only the line ending is removed."""
    try:
        with open(path, encoding="utf-8-sig") as f:  # -sig: a leading byte-order mark is dropped
            text = f.read()
    except FileNotFoundError:
        raise CorruptgenError(f"filelist: no such list file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CorruptgenError(f"filelist: cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    return [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), start=1) if line.rstrip("\r")]


def _check_path(line: str) -> tuple[str, str | None]:
    """The normalised relative path of a list line, and why it is refused (``None`` when it is usable)."""
    if line.startswith(("/", "\\")) or os.path.isabs(line) or (len(line) > 1 and line[1] == ":"):
        return line, "absolute path refused: list paths are relative to the root"
    rel = posixpath.normpath(line)
    if rel == ".." or rel.startswith("../"):
        return line, "path leaves the root"
    if rel == "." or line.endswith("/"):
        return line, "not a file path"
    return rel, None


@register_source("filelist", "filelist:<list.txt>[:<root>]", FileListSource.shown_rest)
def open_filelist(spec: str, rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    """``filelist:<list>[:<root>]``: the list is the longest leading part naming an existing file, ``:`` after it
    separates the root (so paths holding ``:`` still work)."""
    if not rest:
        raise CorruptgenError("filelist: missing list file, use filelist:<list.txt>[:<root>]")
    parts = split_file(rest)
    if parts is None:
        raise CorruptgenError(f"filelist: no such list file: {rest.split(':', 1)[0]}")
    return FileListSource(spec, *parts, limit=limit)

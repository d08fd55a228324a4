"""``filelist:<list.txt>[:<root>]`` source: exactly the images a text file lists, in list order.

The list format is RobustBench's (its 5,000-image ImageNet-C evaluation list ``imagenet_test_image_ids.txt``): one
path per line relative to a root, ``n01440764/ILSVRC2012_val_00000293.JPEG``, joined to the root as written (only the
line ending is removed; blank lines are ignored). The root defaults to the list's own folder. Labels come from the
paths exactly as for ``imagefolder:`` (``<wnid>/<file>`` gives the standard ImageNet-1k index).

A listed file that is missing, a path that leaves the root (absolute, or ``..`` above it) and a repeated line stay
in the item list and are skipped by the build with their reason (counted in the manifest), so the build is exactly
the list.
"""

from __future__ import annotations

import os
import posixpath

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError

from . import register_source
from .base import Source, SourceItem, _path_keys, _read_file, _unique_keys, build_dir_above, refuse_build_dir
from .imagefolder import ImageFolderSource


class FileListSource(ImageFolderSource):
    """The files a list names, relative to ``root`` (labels by :class:`ImageFolderSource`'s rules)."""

    kind = "filelist"

    def __init__(self, spec: str, list_path: str, root: str | None = None, *, limit: int | None = None) -> None:
        self.list_path = os.path.abspath(os.path.expanduser(list_path))
        super().__init__(spec, root or os.path.dirname(self.list_path), limit=limit)
        self.problems: dict[int, str] = {}  # item index -> why it is skipped
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
                problem = None if inside is None else f"inside the corruptgen build directory {inside}: never read"
            if problem is None:
                first_line[rel] = number
                if not os.path.isfile(os.path.join(self.root, *rel.split("/"))):
                    self.missing += 1
            rels.append((number, rel, problem))
        good = [i for i, (_, _, problem) in enumerate(rels) if problem is None]
        if not good:
            raise CorruptgenError(f"filelist: no usable path in {self.list_path}: {rels[0][2]} (line {rels[0][0]})")
        if self.missing == len(good):
            raise CorruptgenError(
                f"filelist: none of the {len(good)} listed files exists under {self.root}; "
                "pass the folder the paths are relative to: filelist:<list>:<root>"
            )
        labels = dict(zip(good, self._labels([rels[i][1] for i in good]), strict=True))
        keys = dict(zip(good, _path_keys([rels[i][1] for i in good]), strict=True))
        self.problems = {i: problem for i, (_, _, problem) in enumerate(rels) if problem is not None}
        ids = [rel if i in keys else f"line {number}: {rel}" for i, (number, rel, _) in enumerate(rels)]
        raw_keys = [keys.get(i, f"line{number}") for i, (number, _, _) in enumerate(rels)]
        final = _unique_keys(raw_keys, ids)
        return [SourceItem(final[i], ids[i], *labels.get(i, (None, None))) for i in range(len(rels))]

    def _read(self, index: int, max_bytes: int) -> bytes:
        problem = self.problems.get(index)
        if problem is not None:
            raise BadImageError(problem)
        rel = self._items[index].source_id
        return _read_file(os.path.join(self.root, *rel.split("/")), rel, max_bytes)

    def identity(self, index: int) -> str:
        problem = self.problems.get(index)
        return f"refused: {problem}" if problem is not None else super().identity(index)

    def _describe_extra(self) -> dict:
        return {**super()._describe_extra(), "list": self.list_path, "refused": len(self.problems),
                "missing": self.missing}  # fmt: skip


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


@register_source("filelist", "filelist:<list.txt>[:<root>]")
def open_filelist(spec: str, rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    """``filelist:<list>[:<root>]``: the list is the longest leading part naming an existing file, ``:`` after it
    separates the root (so paths holding ``:`` still work)."""
    if not rest:
        raise CorruptgenError("filelist: missing list file, use filelist:<list.txt>[:<root>]")
    cuts = [i for i, ch in enumerate(rest) if ch == ":"] + [len(rest)]
    for cut in reversed(cuts):
        if os.path.isfile(os.path.expanduser(rest[:cut])):
            return FileListSource(spec, rest[:cut], rest[cut + 1 :] or None, limit=limit)
    raise CorruptgenError(f"filelist: no such list file: {rest.split(':', 1)[0]}")

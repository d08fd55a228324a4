"""Whole-file writes that never leave a partial file where a reader looks."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

PARTIAL_SUFFIX = ".partial"


def partial_path(path: Path) -> Path:
    """The hidden file a write goes through before it is renamed to ``path``: ``.<name>.partial`` beside it."""
    return path.with_name("." + path.name + PARTIAL_SUFFIX)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """``data`` at ``path`` through a hidden ``.<name>.partial`` file in the same folder, renamed into place: a
    reader sees the old file or the new one, never a part of it; a link or FIFO at either name is replaced, never
    written through."""
    path = Path(path)
    tmp = partial_path(path)
    with suppress(FileNotFoundError):  # a leftover under our hidden name (or anything planted there: never opened)
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # replaces a link at ``path`` itself: never writes through it

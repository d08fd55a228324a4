"""Whole-file writes that never leave a partial file where a reader looks."""

from __future__ import annotations

import os
from pathlib import Path

PARTIAL_SUFFIX = ".partial"


def partial_path(path: Path) -> Path:
    """The hidden file a write goes through before it is renamed to ``path``: ``.<name>.partial`` beside it."""
    return path.with_name("." + path.name + PARTIAL_SUFFIX)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """``data`` at ``path`` through a hidden ``.<name>.partial`` file in the same folder, renamed into place: a
    reader sees the old file or the new one, never a part of it."""
    path = Path(path)
    tmp = partial_path(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)

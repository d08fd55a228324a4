"""Whole-file writes that never leave a partial file where a reader looks."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """``data`` at ``path`` through a hidden ``.<name>.partial`` file in the same folder, renamed into place: a
    reader sees the old file or the new one, never a part of it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_bytes(data)
    os.replace(tmp, path)

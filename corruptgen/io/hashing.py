"""sha256 of files and streams, read in chunks (never held whole in memory)."""

from __future__ import annotations

import hashlib
import os
from typing import Any


def sha256_stream(f: Any, chunk: int = 1 << 20) -> str:
    """sha256 of a binary file object, read in chunks (never held whole in memory)."""
    h = hashlib.sha256()
    while block := f.read(chunk):
        h.update(block)
    return h.hexdigest()


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    with open(path, "rb") as f:
        return sha256_stream(f, chunk)

"""Opening the files a build holds: only regular files, never through a link, never blocking.

A build directory is read by commands a user points at builds they did not make (a download, a shared folder). What
corruptgen writes there is always a regular file (written whole and renamed into place), so anything else in the
place of a shard, the manifest or the card is refused *before* it is opened: a FIFO would block ``open()`` forever, a
device (``/dev/zero``) never ends, a socket cannot be read, and a symbolic link reads a file outside the build (the
Hugging Face cache and DVC keep files as links: read such a build as ``hf:owner/name``, or copy it with its links
resolved, ``cp -rL``). The file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again after opening, so a file
swapped for a FIFO or a link between the check and the open is refused too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..errors import CorruptgenError
from .hashing import sha256_stream

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))  # fmt: skip
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularError(CorruptgenError):
    """A path of a build that is not a regular file; ``reason`` says what it is (without the path)."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path, self.reason = str(path), reason


def refusal(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not read (``"is a FIFO, not a regular file"``), or ``None`` for a regular file; never opens it,
    never follows a link. A missing path raises ``FileNotFoundError``."""
    mode = os.lstat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return f"is a symbolic link (to {os.readlink(path)}); only the regular files a build writes are read"
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file: not opened"


def is_regular(path: str | os.PathLike) -> bool:
    """True for an existing regular file that is not a link (what :func:`open_regular` opens)."""
    try:
        return refusal(path) is None
    except OSError:
        return False


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """``open(path, "rb")`` for a regular file; anything else raises :class:`NotRegularError` without blocking."""
    why = refusal(path)
    if why is not None:
        raise NotRegularError(path, why)
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        if Path(path).is_symlink():  # swapped for a link after the check (O_NOFOLLOW: ELOOP)
            raise NotRegularError(path, refusal(path) or "is a symbolic link") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped after the check
        os.close(fd)
        raise NotRegularError(path, "is not a regular file: not read")
    return os.fdopen(fd, "rb")


def sha256_regular(path: str | os.PathLike) -> str:
    """sha256 of a regular file, streamed (:func:`open_regular`: anything else raises :class:`NotRegularError`)."""
    with open_regular(path) as f:
        return sha256_stream(f)

"""One build at a time per output directory: an exclusive lock on ``<out>/<benchmark>/`` held for the whole build.

* **local** directories (and ``file://``): ``fcntl.flock`` on ``<dir>/.corruptgen.lock``. The kernel releases the lock
  when the holding process ends, ``kill -9`` and the OOM killer included, so a local lock is never stale. The file
  itself is never deleted (deleting a lock file races with a build opening it); the holder writes its pid, host,
  start time and command into it so that a second build can name it.
* **fsspec URLs**: a lock object ``<dir>/.corruptgen.lock`` with the same fields, created only if absent (exclusive
  create where the filesystem has one, else check, write and read back) and removed when the build ends, on Ctrl-C
  and on SIGTERM too (:mod:`corruptgen.io.sigterm`). A build killed hard (SIGKILL, a lost host) or one whose server
  stopped answering leaves it behind: a lock whose holder is provably gone on this host (:mod:`corruptgen.io.liveness`)
  is taken over with a line saying so; any other needs ``force_unlock`` (``--force-unlock``).

A second build waits up to ``wait`` seconds (``--wait-lock``), then fails with one line naming the holder. The lock is
re-entrant within a process, so a caller may hold it around the build and the steps that follow it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from . import sigterm
from .liveness import process_gone, this_host
from .remote_errors import UnreachableError, remote_errors
from .storage import Location, reap_staging

LOCK_NAME = ".corruptgen.lock"
_POLL_S = 0.2
_HELD: dict[str, int] = {}  # lock key -> nesting depth in this process
_TOKENS: set[str] = set()  # tokens of the remote locks this process is taking or holds


def holder_record() -> dict[str, Any]:
    """Who takes the lock: pid, host, UTC start time, command line, and a token that tells two holders apart."""
    program = Path(sys.argv[0] if sys.argv else "python")
    name = program.parent.name if program.name == "__main__.py" else program.name  # python -m corruptgen
    command = shlex.join([name or "python", *sys.argv[1:]])
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "token": uuid.uuid4().hex,
            "time": datetime.now(timezone.utc).replace(microsecond=0).isoformat()}  # fmt: skip


def describe(holder: dict[str, Any] | None) -> str:
    """``pid 123 on host since 2026-01-01T00:00:00+00:00: corruptgen build ...`` (or what is known of it)."""
    if not isinstance(holder, dict) or "pid" not in holder:
        return "holder unknown"
    text = f"pid {holder.get('pid')} on {holder.get('host', '?')} since {holder.get('time', '?')}"
    return text + (f": {holder['command']}" if holder.get("command") else "")


def _parse(raw: bytes | None) -> dict[str, Any] | None:
    try:
        value = json.loads(raw or b"")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@contextlib.contextmanager
def build_lock(out: Path | Location, *, wait: float = 0, force_unlock: bool = False) -> Iterator[None]:
    """Hold the exclusive lock of the build directory ``out`` (created if missing) for the ``with`` block."""
    key = str(out.resolve()) if isinstance(out, Path) else out.url
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    release = _lock_local(out, wait) if isinstance(out, Path) else _lock_remote(out, wait, force_unlock)
    _HELD[key] = 1
    failure: BaseException | None = None
    try:
        yield
    except BaseException as e:
        failure = e
        raise
    finally:
        del _HELD[key]
        release(failure)


def make_dir(root: Path) -> None:
    """``mkdir -p root``, failing in one line when a path component is a file."""
    for part in (root, *root.parents):
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                raise CorruptgenError(f"output path {root}: {part} is not a directory")
            break
    root.mkdir(parents=True, exist_ok=True)


def _lock_local(root: Path, wait: float) -> Callable[[BaseException | None], None]:
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock; builds into one folder are not serialised there
        return lambda failure: None
    make_dir(root)
    try:
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise CorruptgenError(f"cannot open the build lock {root / LOCK_NAME}: {e.strerror or e}") from None
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = _read_holder(fd)
                os.close(fd)
                raise CorruptgenError(
                    f"{root} is locked by another build ({describe(holder)}); wait for it to finish "
                    "(or pass --wait-lock SECONDS) or choose another --out"
                ) from None
            time.sleep(_POLL_S)
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(holder_record()).encode(), 0)

    def release(failure: BaseException | None) -> None:
        try:
            os.ftruncate(fd, 0)  # a later reader never names a finished build
        finally:
            os.close(fd)  # closing releases the flock

    return release


def _read_holder(fd: int) -> dict[str, Any] | None:
    """The holder's record; the holder writes it just after locking, so an empty file is read again briefly."""
    for _ in range(20):
        holder = _parse(os.pread(fd, 1 << 16, 0))
        if holder is not None:
            return holder
        time.sleep(0.05)
    return None


def _lock_remote(loc: Location, wait: float, force_unlock: bool) -> Callable[[BaseException | None], None]:
    holding = sigterm.hold()  # from before the lock object exists until after it is removed
    try:
        record = _take_remote(loc, wait, force_unlock)
    except BaseException:
        if holding:
            sigterm.release()
        raise

    def release(failure: BaseException | None) -> None:
        try:
            if not isinstance(failure, UnreachableError):  # the server does not answer: the next build takes it over
                with contextlib.suppress(Exception):  # never mask the build's own outcome
                    if (_parse(loc.read_bytes(LOCK_NAME)) or {}).get("token") == record["token"]:
                        loc.fs.rm(loc.path(LOCK_NAME))
            reap_staging()  # what this build's killed workers left
            if isinstance(failure, sigterm.Terminated):
                print("corruptgen: terminated (SIGTERM); re-run the same command to resume", file=sys.stderr)
        finally:
            _TOKENS.discard(record["token"])
            if holding:
                sigterm.release()  # ends the process when SIGTERM arrived

    return release


def _take_remote(loc: Location, wait: float, force_unlock: bool) -> dict[str, Any]:
    """Create the lock object (waiting up to ``wait`` seconds for its holder); returns the record written."""
    if force_unlock:
        stale = _parse(loc.read_bytes(LOCK_NAME))
        if loc.exists(LOCK_NAME):
            loc.fs.rm(loc.path(LOCK_NAME))
            print(f"corruptgen: removed the lock of {loc.url} ({describe(stale)})", file=sys.stderr)
    record = holder_record()
    data = json.dumps(record).encode()
    _TOKENS.add(record["token"])
    deadline = time.monotonic() + wait
    while not _create_exclusive(loc, data):
        holder = _parse(loc.read_bytes(LOCK_NAME))
        if _holder_gone(holder):
            _take_over(loc, holder)
            continue
        if time.monotonic() >= deadline:
            _TOKENS.discard(record["token"])
            raise CorruptgenError(
                f"{loc.url} is locked by another build ({describe(holder)}); if that build is no longer running "
                f"(a build killed on another host leaves its lock object {LOCK_NAME} behind) re-run with --force-unlock"
            )
        time.sleep(max(_POLL_S, 1.0))
    return record


def _holder_gone(holder: dict[str, Any] | None) -> bool:
    """Whether the lock's holder provably no longer runs: a process of this host that ended (or this very process,
    for a lock it left behind earlier)."""
    if not isinstance(holder, dict) or holder.get("host") != this_host():
        return False
    if holder.get("pid") == os.getpid():
        return holder.get("token") not in _TOKENS
    try:
        since = datetime.fromisoformat(str(holder.get("time"))).timestamp()
    except ValueError:
        since = None
    return process_gone(holder.get("pid"), since)


def _take_over(loc: Location, holder: dict[str, Any]) -> None:
    """Remove the lock object of a holder that is gone, unless another build replaced it meanwhile."""
    current = _parse(loc.read_bytes(LOCK_NAME))
    if current is not None and current.get("token") == holder.get("token"):
        with remote_errors(loc.url), contextlib.suppress(FileNotFoundError):
            loc.fs.rm(loc.path(LOCK_NAME))
        print(f"corruptgen: took over the lock of {loc.url}: its holder ({describe(holder)}) is no longer running",
              file=sys.stderr)  # fmt: skip


def _create_exclusive(loc: Location, data: bytes) -> bool:
    """Create the lock object only if it does not exist; ``False`` when another build holds it."""
    path = loc.path(LOCK_NAME)
    try:
        if not loc.bucket:  # object stores have no folders
            loc.fs.makedirs(loc.path(), exist_ok=True)
        with loc.fs.open(path, "xb") as f:
            f.write(data)
        return True
    except FileExistsError:
        return False
    except (ValueError, NotImplementedError, TypeError):  # no exclusive create here: check, write, read back
        if loc.exists(LOCK_NAME):
            return False
        loc.put_bytes(LOCK_NAME, data)
        return loc.read_bytes(LOCK_NAME) == data
    except Exception as e:  # e.g. no permission to write
        raise CorruptgenError(
            f"cannot create the build lock {loc.url_of(LOCK_NAME)}: {type(e).__name__}: {e}"
        ) from None

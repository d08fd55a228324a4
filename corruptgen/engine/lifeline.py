"""Worker processes die with the process that started them.

The OOM killer (or a user's ``kill -9``) ends only the build driver; without help its ``--workers`` processes would
run on under PID 1, each holding hundreds of MB. :func:`die_with_parent`, called first in every worker, makes
sure they do not:

* on Linux it asks the kernel to SIGKILL the worker when its parent dies (``prctl(PR_SET_PDEATHSIG)``), then checks
  ``os.getppid()`` once more, because the parent may have died before the request was made (the kernel sends the
  signal when the *thread* that started the worker ends: the pool lives inside one call on one thread, the build's);
* everywhere (and as the only guard where ``prctl`` is not available) a daemon thread polls ``os.getppid()`` and
  ends the process with ``os._exit`` once the parent is gone (reparented to init or a subreaper).

Threads (the pipelined renderer's I/O pool) need nothing: they end with their process.

A local worker also leaves Ctrl-C to the driver (SIGINT is ignored: the terminal sends it to the whole process group)
and stops when the driver sends SIGTERM (:func:`stop_on_sigterm`): inside a chunk (:func:`run_stoppable`) the chunk is
abandoned like any failed one, its partial shards discarded, then the process exits; an idle worker exits at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.5
ORPHAN_EXIT_CODE = 70
STOPPED_EXIT_CODE = 71  # a worker the driver stopped with SIGTERM
_IN_CHUNK = threading.Event()


class Stopped(BaseException):
    """Raised inside a running chunk when the driver stops the worker (not an error of the chunk)."""


def die_with_parent(parent_pid: int | None) -> None:
    """Make this process end within ~``POLL_SECONDS`` of ``parent_pid`` (its parent) dying; ``None``: do nothing."""
    if parent_pid is None:
        return
    if sys.platform.startswith("linux"):
        _set_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before (or while) the signal was set
        os._exit(ORPHAN_EXIT_CODE)
        return  # not reached (os._exit does not return)
    watchdog = threading.Thread(target=_watch_parent, args=(parent_pid,), name="corruptgen-lifeline", daemon=True)
    watchdog.start()


def _set_parent_death_signal() -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)``; False where libc or the call is unavailable."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_SECONDS)
    os._exit(ORPHAN_EXIT_CODE)


def stop_on_sigterm() -> None:
    """In a local worker: ignore SIGINT (the driver handles Ctrl-C) and stop on SIGTERM (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: object) -> None:
    if _IN_CHUNK.is_set():
        raise Stopped
    os._exit(STOPPED_EXIT_CODE)


def run_stoppable(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; when SIGTERM stops it, the process exits after ``fn`` has cleaned up (its ``finally`` and
    ``except BaseException`` blocks ran)."""
    _IN_CHUNK.set()
    try:
        return fn(*args)
    except Stopped:
        os._exit(STOPPED_EXIT_CODE)
    finally:
        _IN_CHUNK.clear()

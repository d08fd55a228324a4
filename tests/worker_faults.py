"""Chunk functions that misbehave on purpose, for the executor tests: a worker killed as the OOM killer would, and a
chunk that takes forever (to interrupt it). Spawned workers import this module by name (``tests/`` is on their
``sys.path``), so it imports only what a worker needs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from corruptgen.engine.pipeline import render_chunk


def _marker(task, name: str) -> Path:
    """``<out>/<name>-<chunk>`` beside the build directory ``<out>/<benchmark>``."""
    return Path(task.out_dir).parent / f"{name}-{task.chunk}"


def die(task, progress=None):
    """Render ``task``, unless a marker says to kill its worker with SIGKILL first (what the OOM killer sends):
    ``kill-once-<chunk>`` once (the marker is removed), ``kill-always-<chunk>`` every time."""
    once = _marker(task, "kill-once")
    if once.exists():
        once.unlink()
        os.kill(os.getpid(), signal.SIGKILL)
    if _marker(task, "kill-always").exists():
        os.kill(os.getpid(), signal.SIGKILL)
    return render_chunk(task, progress)


def crawl(task, progress=None):
    """Render ``task``; every chunk but chunk 0 sleeps 10 minutes after its first input (a chunk that is running)."""

    def slow(n: int) -> None:
        if task.chunk > 0:
            time.sleep(600)

    return render_chunk(task, slow)

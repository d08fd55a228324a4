"""SIGTERM unwinds like Ctrl-C while corruptgen holds something to clean up (a remote build lock, staging files).

Batch schedulers preempt a job with SIGTERM (and SIGKILL after a grace period). SIGTERM's default action ends the
process at once, leaving the lock object of a remote build and the local staging files of the shards being uploaded.
While at least one :func:`hold` is not yet released in the main thread, SIGTERM raises :class:`Terminated` there
instead: a ``KeyboardInterrupt``, so every cleanup written for Ctrl-C runs. When the outermost hold is released, the
process ends by SIGTERM as it would have (exit status 143), its cleanup done; a second SIGTERM during the cleanup
ends it at once.
"""

from __future__ import annotations

import os
import signal
import threading

_state = {"depth": 0, "received": False}


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while corruptgen held something to clean up (raised in the main thread)."""


def _on_sigterm(signum: int, frame: object) -> None:
    _state["received"] = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated("terminated by SIGTERM")


def hold() -> bool:
    """Open a block (see the module); False, and nothing changed, outside the main thread or when SIGTERM already
    has a handler of its own (the application's choice is kept)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if _state["depth"] == 0 and signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    _state["depth"] += 1
    if _state["depth"] == 1:
        signal.signal(signal.SIGTERM, _on_sigterm)
    return True


def release() -> None:
    """Close a block :func:`hold` opened (returned True); the outermost one re-delivers a SIGTERM that arrived."""
    _state["depth"] -= 1
    if _state["depth"] == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if _state["received"]:
            _state["received"] = False
            os.kill(os.getpid(), signal.SIGTERM)

"""Whether the process that left something behind (a remote lock object, a staging file) is provably gone.

Only a process of this host can be checked, and only its absence proves it: no process has its pid, the process with
its pid is a zombie (ended, not yet reaped), or that process started after the thing was written (the pid was reused).
Whatever cannot be told (another host, no ``/proc``) counts as alive.
"""

from __future__ import annotations

import hashlib
import os
import socket
from functools import cache

_CLOCK_SLACK_S = 2.0  # boot time is whole seconds, lock times too


def this_host() -> str:
    return socket.gethostname()


@cache
def host_tag() -> str:
    """8 hex digits naming this host in file names (a shared ``$TMPDIR`` may hold other hosts' files)."""
    return hashlib.sha1(this_host().encode()).hexdigest()[:8]


def process_gone(pid: object, since: float | None = None) -> bool:
    """True when no live process of this host can be the process ``pid`` that was running at time ``since``."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        pass
    except OSError:
        return False
    state, started = _proc_stat(pid)
    if state in ("Z", "X"):
        return True
    return since is not None and started is not None and started > since + _CLOCK_SLACK_S


def _proc_stat(pid: int) -> tuple[str | None, float | None]:
    """State letter and start time (epoch seconds) of a process from Linux ``/proc``; ``(None, None)`` elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
        fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
        return fields[0], _boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None, None


@cache
def _boot_time() -> float:
    with open("/proc/stat", encoding="ascii") as f:
        return float(next(line.split()[1] for line in f if line.startswith("btime ")))

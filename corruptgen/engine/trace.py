"""An opt-in timeline of a build, for ``scripts/bench_scaling.py``: where the wall clock of ``--workers N`` goes.

With ``CORRUPTGEN_TRACE=<file>`` in the environment (read once, when this module is imported: local workers inherit
it), the driver and every worker process append one JSON line per event to the file: its name, the wall clock
(``time.time()``, comparable across processes), the process's CPU seconds (``time.process_time()``: user + system,
every thread) and pid, plus the event's own fields. The events:

* ``render_start`` / ``render_end`` (driver): the tasks handed to the executor, in the order they are handed out
  (``tasks``: name, inputs, subsets of each) / every result collected;
* ``spawn`` (driver): a local worker process started (``worker``: its pid);
* ``ready`` (worker): the worker set up (imports done, initializer run), waiting for its first task;
* ``setup`` (the process rendering a task): the task's renderer is ready (source opened, shards open);
* ``task`` (the same process): the task ended; ``start``/``cpu_start`` when it began, its inputs and subsets;
* ``exit`` (worker): the worker leaves, no more tasks.

Without the variable nothing is written: each call costs one comparison.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

ENV = "CORRUPTGEN_TRACE"
PATH = os.environ.get(ENV) or None


def event(name: str, **fields: Any) -> None:
    """Append one event (see the module docstring) when tracing is on."""
    if PATH is None:
        return
    line = json.dumps({"event": name, "t": time.time(), "cpu": time.process_time(), "pid": os.getpid(), **fields})
    with open(PATH, "a") as f:  # one small write in append mode: lines of concurrent processes stay whole
        f.write(line + "\n")


def read(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The events of a trace file, in the order they were written."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]

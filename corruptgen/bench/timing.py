"""How every ``corruptgen bench`` stage and baseline, and every ``scripts/bench_*.py``, is timed.

* fixed thread settings, stated in the output (:func:`fix_threads`);
* a warm-up call (imports, caches, oneDNN primitive creation) that is not timed;
* ``runs`` timed runs (default 3), each repeating the work until at least ``min_seconds`` (default 0.5 s) passed;
* the median over the runs of images per wall-clock second and of CPU-seconds per image (``time.process_time``:
  every thread of this process; work done in child processes is not included and is marked where it happens).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

RUNS = 3
MIN_RUN_S = 0.5
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def fix_threads(threads: int | None = 1) -> dict[str, Any]:
    """Set torch's intra-op and OpenCV's thread counts to ``threads`` (``None``: leave them) and return the settings
    that decide the speed of the CPU kernels: thread counts, the thread variables of the environment, the CPU
    instruction set torch dispatches to (oneDNN picks its convolution kernels by it) and the denormal mode."""
    import cv2
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
        cv2.setNumThreads(threads)
    return {
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "opencv_threads": cv2.getNumThreads(),
        **{name: os.environ.get(name, "unset") for name in THREAD_ENV},
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "flush_denormal": False,  # torch's default; nothing in corruptgen changes it
    }


def describe_threads(settings: dict[str, Any]) -> str:
    """One line stating :func:`fix_threads`' settings."""
    env = ", ".join(f"{name}={settings[name]}" for name in THREAD_ENV)
    return (f"threads: torch {settings['torch_threads']} intra-op / {settings['torch_interop_threads']} inter-op, "
            f"OpenCV {settings['opencv_threads']}; {env}; CPU capability {settings['cpu_capability']}")  # fmt: skip


def time_work(
    work: Callable[[], int],
    *,
    runs: int = RUNS,
    min_seconds: float = MIN_RUN_S,
    warmup: bool = True,
    sync: Callable[[], None] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Time ``work`` (one call does a unit of work and returns how many images it produced).

    Returns ``images`` and ``seconds`` of the median run, ``images_per_s`` (median over runs, wall clock),
    ``cpu_s_per_image`` (median over runs), ``runs``, ``min_run_s`` and ``extra``."""
    sync = sync or (lambda: None)
    if warmup:
        work()
        sync()
    records = []
    for _ in range(max(1, runs)):
        images, w0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            images += work()
            sync()
            if time.perf_counter() - w0 >= min_seconds:
                break
        records.append((images, time.perf_counter() - w0, time.process_time() - c0))
    rates = [n / wall for n, wall, _ in records]
    median_run = sorted(records, key=lambda r: r[0] / r[1])[len(records) // 2]
    return {
        "images": median_run[0],
        "seconds": round(median_run[1], 6),
        "images_per_s": statistics.median(rates),
        "cpu_s_per_image": statistics.median(cpu / n for n, _, cpu in records),
        "runs": len(records),
        "min_run_s": min_seconds,
        **extra,
    }


@dataclass(frozen=True)
class ChildRun:
    """A command run in a fresh process: its result, wall clock, CPU (``getrusage`` of the children: user, system)
    and the largest resident set of any child so far (KiB, as ``ru_maxrss``)."""

    done: subprocess.CompletedProcess
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kib: int

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def run_child(command: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
              ) -> ChildRun:  # fmt: skip
    """Run ``command`` to its end (output captured as text) and measure it."""
    import resource  # POSIX only: imported where a child is measured

    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(list(command), env=env, cwd=cwd, capture_output=True, text=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return ChildRun(done, wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, after.ru_maxrss)

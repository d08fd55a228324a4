"""``--workers`` processes die with the build driver, even when the driver is SIGKILLed (what the OOM killer does)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from corruptgen.engine import lifeline

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the worker processes through /proc")


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of ``pid``, or None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")  # a zombie has ended (its new parent may not reap it)


def _children(ppid: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and (_stat(int(e)) or ("", 0))[1] == ppid]


def _has_loaded_corruptgen(pid: int) -> bool:
    """The worker has unpickled its initializer (importing corruptgen.engine.chunk loads OpenCV), so it runs next."""
    try:
        return "cv2" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_workers_die_when_the_driver_is_killed(tmp_path):
    args = [sys.executable, "-m", "corruptgen", "build", "syn2nat", "--subsets", "all", "--shard-size", "2",
            "--workers", "2", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    driver = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.time() + 120
        while time.time() < deadline and driver.poll() is None:
            spawned = [p for p in _children(driver.pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
            if len(spawned) == 2 and all(_has_loaded_corruptgen(p) for p in spawned):
                workers = spawned
                break
            time.sleep(0.1)
        assert workers, "the build never had two running workers"
        time.sleep(0.5)  # the initializers have run; the workers are rendering
        assert driver.poll() is None, "the build ended before the driver could be killed"
        driver.send_signal(signal.SIGKILL)  # the driver alone, not its process group
        driver.wait()
        gone_by = time.time() + 5
        while time.time() < gone_by and any(_alive(p) for p in workers):
            time.sleep(0.05)
        assert not [p for p in workers if _alive(p)], "workers outlived the killed driver"
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)  # leave nothing behind when the test fails
        except ProcessLookupError:
            pass
        driver.wait()


def test_lifeline_ignores_no_parent_and_watches_the_parent(monkeypatch):
    exits: list[int] = []
    started: list[threading.Thread] = []
    monkeypatch.setattr(lifeline.os, "_exit", exits.append)
    monkeypatch.setattr(lifeline, "_set_parent_death_signal", lambda: True)
    monkeypatch.setattr(lifeline.threading.Thread, "start", lambda self: started.append(self))
    lifeline.die_with_parent(None)
    assert not exits and not started
    lifeline.die_with_parent(os.getppid())
    assert not exits and len(started) == 1 and started[0].daemon
    lifeline.die_with_parent(os.getppid() + 1)  # the parent already died: exit at once, before any watchdog
    assert exits == [lifeline.ORPHAN_EXIT_CODE] and len(started) == 1

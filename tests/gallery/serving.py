"""``corruptgen gallery ... --serve`` in a child process that never outlives its test: it dies with the test process
(:func:`corruptgen.engine.lifeline.die_with_parent`: even when pytest is killed), its URL is awaited with a deadline,
and leaving :func:`served` stops it with Ctrl-C (SIGINT), killing it if it has not stopped after ``stop_s`` seconds."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

#: the child: ``python -c CHILD <parent pid> <corruptgen args>``
CHILD = """
import sys
from corruptgen.engine.lifeline import die_with_parent
die_with_parent(int(sys.argv.pop(1)))
from corruptgen.cli import main
sys.exit(main(sys.argv[1:]))
"""


@contextlib.contextmanager
def served(
    args: list[str], *, child: str = CHILD, start_s: float = 120, stop_s: float = 10
) -> Iterator[tuple[subprocess.Popen, str]]:
    """Run ``corruptgen ARGS`` (ending with ``--serve``); yield the process and the URL it serves."""
    proc = subprocess.Popen([sys.executable, "-c", child, str(os.getpid()), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)  # fmt: skip
    try:
        yield proc, _url(proc, start_s)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=stop_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _url(proc: subprocess.Popen, seconds: float) -> str:
    """The URL the child prints (``serving the gallery at URL``), read without blocking past ``seconds``."""
    out, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.2)[0]:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            out += chunk
            found = re.search(rb"serving the gallery at (\S+)", out)
            if found:
                return found.group(1).decode()
            if not chunk:
                break
        elif proc.poll() is not None:
            break
    raise AssertionError(f"the gallery server printed no URL within {seconds:.0f} s: {out.decode(errors='replace')}")

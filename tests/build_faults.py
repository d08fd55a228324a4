"""Builds killed at a phase boundary, for the resume tests: the whole build (driver and workers) ends with SIGKILL
when it reaches the phase named by ``CORRUPTGEN_TEST_KILL_AT`` (read only here; the spawned workers inherit it):

* ``first-shard``: the first chunk task starts (no shard written yet);
* ``mid-shard``: chunk 1 has rendered its inputs into its partial shard files (not yet committed);
* ``last-shard``: every shard is written and recorded in the manifest, which still says ``complete: false``; the final
  manifest is not written;
* ``card``: the manifest is final, the card's figures are written, its ``README.md`` is not.

Run a build as ``python -c DRIVER <tests dir> <corruptgen args>`` in a new session (the kill takes its process
group). Spawned workers import this module by name (``tests/`` is on their ``sys.path``)."""

from __future__ import annotations

import os
import signal

from corruptgen.engine.pipeline import render_chunk as _render_chunk

PHASE_ENV = "CORRUPTGEN_TEST_KILL_AT"
PHASES = ("first-shard", "mid-shard", "last-shard", "card")

DRIVER = """
import sys
sys.path.insert(0, sys.argv.pop(1))
import build_faults
build_faults.install()
from corruptgen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def kill_build() -> None:
    """SIGKILL this process's group: the driver and every worker, as ``kill -9 -PGID`` or a lost machine would."""
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _phase() -> str | None:
    return os.environ.get(PHASE_ENV)


def render_chunk(task, progress=None):
    """The engine's chunk function, killing the build at the ``first-shard`` or ``mid-shard`` boundary."""
    if _phase() == "first-shard":
        kill_build()

    def advance(n: int) -> None:
        if _phase() == "mid-shard" and task.chunk == 1:
            kill_build()
        if progress is not None:
            progress(n)

    return _render_chunk(task, advance)


def install() -> None:
    """In the driver: route the engine's chunks, manifest writes and card writes through the hooks."""
    from corruptgen.engine import executors
    from corruptgen.engine import run as engine
    from corruptgen.hub import card

    executors.render_chunk = render_chunk
    if _phase() == "last-shard":
        engine.MANIFEST_SHARE = float("inf")  # every finished chunk is recorded at once
        write_manifest = engine.write_manifest

        def last(target, manifest):
            if manifest["complete"]:
                kill_build()
            return write_manifest(target, manifest)

        engine.write_manifest = last
    if _phase() == "card":
        write = card.CardStore.write

        def before_readme(self, rel, data):
            if rel == card.README:
                kill_build()
            return write(self, rel, data)

        card.CardStore.write = before_readme

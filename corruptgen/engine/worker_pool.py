"""Local worker processes for chunk tasks: one task at a time each, and the pool knows which task each one runs.

Why not :class:`concurrent.futures.ProcessPoolExecutor`: when one of its workers dies (the OOM killer, ``kill -9``),
the whole pool breaks, every task fails with ``BrokenProcessPool`` and nothing says which task the dead worker ran;
and on Ctrl-C its shutdown waits for every running task to finish. Here

* a worker that dies is replaced by a fresh one and only *its* task runs again, up to ``retries`` times; a task that
  used them up is given up (the others run on) and :meth:`WorkerPool.run` then fails in one line naming it and how
  its worker died;
* :meth:`WorkerPool.stop` (Ctrl-C or any error in the driver) sends SIGTERM to every worker: a running task stops
  inside its chunk and cleans up, the worker exits (:func:`corruptgen.engine.lifeline.stop_on_sigterm`); a worker still
  alive after ``STOP_GRACE_S`` seconds is killed.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from ..errors import CorruptgenError
from . import trace
from .lifeline import run_stoppable

STOP_GRACE_S = 5.0  # seconds stopped workers get to clean up before they are killed


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker (attached as the ``__cause__`` of the re-raised one)."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    task: Any = None


def _serve(conn: Connection, initializer: Callable[..., None], initargs: tuple) -> None:
    """A worker's loop: run each ``(fn, task)`` received, send back ``(ok, value, traceback text)``."""
    initializer(*initargs)
    trace.event("ready")
    while True:
        try:
            message = conn.recv()
        except EOFError:
            message = None
        if message is None:
            trace.event("exit")
            _leave()
            return
        fn, task = message
        try:
            reply = (True, run_stoppable(fn, task), "")
        except Exception as e:
            reply = (False, _portable(e), "".join(traceback.format_exception(e)))
        conn.send(reply)


def _leave() -> None:
    """End this worker at once: every shard it wrote is committed and its result sent, so nothing is left to finalise,
    and the driver (which waits for its workers to end before it writes the final manifest) does not wait for an
    interpreter's teardown of numpy, OpenCV, SciPy or torch."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _portable(error: Exception) -> Exception:
    try:
        return pickle.loads(pickle.dumps(error))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


def death(exitcode: int | None) -> str:
    """How a worker process ended, in words."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (": the OOM killer or kill -9" if -exitcode == signal.SIGKILL else "")
    return f"exit code {exitcode}"


class WorkerPool:
    """Up to ``size`` spawned processes, each set up by ``initializer(*initargs)``, started when first needed."""

    def __init__(self, size: int, initializer: Callable[..., None], initargs: tuple = ()) -> None:
        self.size, self.initializer, self.initargs = size, initializer, initargs
        self._context = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []
        self.stopped: list[Any] = []  # the tasks that were running when :meth:`stop` ended their workers

    def run(self, fn: Callable[[Any], Any], tasks: Iterable[Any], *, name: Callable[[Any], str],
            retries: int) -> Iterator[tuple[Any, Any]]:  # fmt: skip
        """Yield ``(task, fn(task))`` as tasks finish; a task whose worker died is run again on a fresh worker
        (``retries`` times at most, each announced on stderr). On any exception in the driver (Ctrl-C included) the
        workers are stopped; after the last task, a task given up fails the run in one line."""
        todo, deaths, given_up = deque(tasks), Counter(), []
        try:
            while todo or self._busy():
                self._assign(fn, todo)
                busy = self._busy()
                if not busy:  # every worker handed a task had died while idle: start fresh ones
                    continue
                ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
                for worker in busy:
                    if worker.conn in ready or worker.process.sentinel in ready:
                        done = self._collect(worker)
                        if done is not None:
                            yield done
                            continue
                        task, how = worker.task, death(worker.process.exitcode)
                        self._discard(worker)
                        deaths[name(task)] += 1
                        if deaths[name(task)] > retries:
                            given_up.append(f"{name(task)} ({how}, {deaths[name(task)]} times)")
                            continue
                        print(f"corruptgen: a worker process died ({how}) while rendering {name(task)}; rendering "
                              f"it again on a fresh worker (retry {deaths[name(task)]} of {retries})",
                              file=sys.stderr)  # fmt: skip
                        todo.appendleft(task)
        except BaseException:
            self.stop()
            raise
        self.close()
        if given_up:
            raise CorruptgenError(
                f"a worker process died while rendering {', '.join(given_up)}; every other chunk finished and is "
                "kept: run the same command again (with fewer --workers if memory ran out)"
            )

    def _busy(self) -> list[_Worker]:
        return [w for w in self.workers if w.task is not None]

    def _assign(self, fn: Callable[[Any], Any], todo: deque) -> None:
        """Hand tasks to idle workers, starting workers up to ``size``."""
        for worker in [w for w in self.workers if w.task is None]:
            if not worker.process.is_alive():
                self._discard(worker)
        idle = [w for w in self.workers if w.task is None]
        while todo and (idle or len(self.workers) < self.size):
            worker = idle.pop() if idle else self._start()
            worker.task = todo.popleft()
            try:
                worker.conn.send((fn, worker.task))
            except OSError:  # it died while idle: the task never started there
                todo.appendleft(worker.task)
                self._discard(worker)

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(theirs, self.initializer, self.initargs),
                                        name="corruptgen-worker", daemon=True)  # fmt: skip
        process.start()
        trace.event("spawn", worker=process.pid)
        theirs.close()
        worker = _Worker(process, ours)
        self.workers.append(worker)
        return worker

    def _collect(self, worker: _Worker) -> tuple[Any, Any] | None:
        """``(task, result)`` of a worker that answered (re-raises the task's exception); ``None`` when it died."""
        try:
            ok, value, text = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join()
            return None
        task, worker.task = worker.task, None
        if not ok:
            raise value from RemoteTraceback(text)
        return task, value

    def _discard(self, worker: _Worker) -> None:
        worker.process.join(timeout=STOP_GRACE_S)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
        self.workers.remove(worker)

    def close(self) -> None:
        """Let idle workers exit (they are sent no more tasks)."""
        for worker in self.workers:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        self._end(time.monotonic() + STOP_GRACE_S)

    def stop(self) -> None:
        """SIGTERM every worker and wait for them to end (killing those that take longer than ``STOP_GRACE_S``)."""
        self.stopped = [w.task for w in self._busy()]
        for worker in self.workers:
            if worker.process.is_alive():
                worker.process.terminate()
        self._end(time.monotonic() + STOP_GRACE_S)

    def _end(self, deadline: float) -> None:
        for worker in self.workers:
            worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self.workers.clear()

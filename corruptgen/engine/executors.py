"""Where chunk tasks run: in this process, in local worker processes (:mod:`corruptgen.engine.worker_pool`: a killed
worker's chunk is retried, Ctrl-C stops running chunks), or on a Ray cluster.

Every executor runs the same pure function :func:`corruptgen.engine.pipeline.render_chunk` on the same
:class:`~corruptgen.engine.chunk.ChunkTask` values and yields results as they complete; the driver assembles the
manifest. So the bytes never depend on the executor. Ray is optional (``pip install corruptgen[ray]``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

from ..errors import CorruptgenError
from ..io.layout import shard_relpath
from ..io.ownership import remove_stale_partials
from ..io.storage import local_path
from .chunk import ChunkTask, worker_init
from .options import ENGINES, RayOptions
from .pipeline import render_chunk
from .worker_pool import WorkerPool

WORKER_RETRIES = 3  # fresh workers a chunk gets after its worker died (as many as the Ray engine's max_retries)
RAY_POLL_S = 1.0  # a Ray build checks at least this often that its local cluster still runs
RAY_GET_S = 60.0  # fetching the result of a finished chunk (a small dict) never takes this long on a live cluster
_CLUSTER_PROCESSES = {"gcs_server", "raylet"}  # a local Ray cluster cannot run tasks without these (Ray's names)


def run_tasks(
    tasks: list[ChunkTask], *, engine: str = "local", workers: int = 1, bar=None, ray: RayOptions | None = None
) -> Iterator[dict[str, Any]]:
    """Run ``tasks``; yield each chunk's result as it completes (order may vary, content does not)."""
    if engine == "local":
        yield from _run_local(tasks, workers, bar)
    elif engine == "ray":
        yield from _run_ray(tasks, bar, ray or RayOptions())
    else:
        raise CorruptgenError(f"unknown --engine {engine!r}; use one of {', '.join(ENGINES)}")


def _advance(bar, task: ChunkTask) -> None:
    if bar is not None:
        bar.update(task.counted)


def _run_local(tasks: list[ChunkTask], workers: int, bar) -> Iterator[dict[str, Any]]:
    if workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield render_chunk(task, progress=bar.update if bar is not None else None)
        return
    # workers die with this process, even under SIGKILL, and stop on SIGTERM (corruptgen.engine.lifeline)
    pool = WorkerPool(min(workers, len(tasks)), worker_init, (os.getpid(),))
    try:
        for task, result in pool.run(render_chunk, tasks, name=lambda t: t.name, retries=WORKER_RETRIES):
            _advance(bar, task)
            yield result
    except BaseException:
        _discard_partials(pool.stopped)  # of workers that had to be killed; the others discarded their own
        raise


def _discard_partials(tasks: list[ChunkTask]) -> None:
    """Delete the partial shard files of stopped local tasks (a remote build's partials are temporary files)."""
    for task in tasks:
        root = local_path(task.out_dir)
        if root is not None:
            remove_stale_partials(root, (shard_relpath(s, task.chunk, task.plan.split) for s in task.subsets))


def _ray_chunk(task: ChunkTask) -> dict[str, Any]:
    """Ray entry point: one OpenCV thread per task (Ray already runs one task per CPU)."""
    worker_init()
    return render_chunk(task)


def _run_ray(tasks: list[ChunkTask], bar, options: RayOptions) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        raise CorruptgenError("--engine ray needs Ray: pip install 'corruptgen[ray]'") from None
    if not tasks:
        return
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=options.address, num_cpus=options.local_cpus if options.address is None else None,
                     include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)  # fmt: skip
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise CorruptgenError(f"cannot reach the Ray cluster at {options.address or 'local'}: {e}") from None
    gpus = options.num_gpus
    if gpus is None:
        gpus = 1 if tasks[0].options.device.startswith("cuda") else 0
    remote = ray.remote(num_cpus=options.num_cpus, num_gpus=gpus, max_retries=options.max_retries,
                        retry_exceptions=True)(_ray_chunk)  # fmt: skip
    pending = {remote.remote(task): task for task in tasks}
    local = started_here and options.address is None  # a cluster of this process: it can see its processes end
    try:
        while pending:
            if local:
                _check_cluster(ray)
            done, _ = ray.wait(list(pending), num_returns=1, timeout=RAY_POLL_S)
            for ref in done:
                task = pending.pop(ref)
                result = ray.get(ref, timeout=RAY_GET_S)
                _advance(bar, task)
                yield result
    except ray.exceptions.RayError as e:
        if isinstance(e, ray.exceptions.RayTaskError):  # the chunk's own error: one line, without Ray's traceback
            if isinstance(e.cause, CorruptgenError):  # e.g. an --out that stopped answering
                raise e.cause from None
            raise
        first = (str(e).strip() or "no message").splitlines()[0]
        raise _cluster_failed(f"{type(e).__name__}: {first}") from None
    finally:
        for ref in pending:  # a chunk still running when the build stops (an error, Ctrl-C)
            with suppress(Exception):
                ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()


def _check_cluster(ray) -> None:
    """Fail in one line when a process of the local Ray cluster this build started has ended (killed, out of memory):
    its tasks would never finish, and Ray would end this process a minute later with its own error."""
    try:
        dead = ray._private.worker.global_worker.node.dead_processes()  # Ray's own liveness check of its processes
    except Exception:  # not in this Ray version: Ray's own error ends such a build, a minute later
        return
    names = sorted({kind for kind, _ in dead} & _CLUSTER_PROCESSES)
    if names:
        raise _cluster_failed(f"its {' and '.join(names)} process{'es' if len(names) > 1 else ''} ended")


def _cluster_failed(why: str) -> CorruptgenError:
    return CorruptgenError(f"the Ray cluster failed while the build ran ({why}); every finished chunk is kept: run the "
                           "same command again (--engine local needs no cluster)")  # fmt: skip

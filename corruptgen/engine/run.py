"""The one render engine: plan → sample plan (chunks of the source) → render → shards + manifest.

The unit of work is a *chunk*: a contiguous range of source items. A chunk task decodes each input once and writes one
shard per subset (``data/<subset>/<split>-<chunk:05d>.tar``). Tasks are pure functions of (plan, chunk), so the bytes
never depend on worker count or order; finished shards are recorded in the manifest and skipped on re-run.

``out_dir`` is a local directory or any fsspec URL (``s3://``, ``gs://``, ``hf://``, ``memory://``, ...): workers upload
their own shards (one put each), the driver writes the manifest; see :mod:`corruptgen.io.storage` for the commit
semantics per filesystem.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..family.benchmark import find_benchmark
from ..family.plan import Plan
from ..io.layout import shard_relpath
from ..io.lock import build_lock
from ..io.regular import is_regular, sha256_regular
from ..io.remote_errors import UnreachableError
from ..io.sources import Source
from ..io.storage import Location, local_path, location
from ..progress import progress_bar
from ..wording import counted
from . import trace
from .build_dir import check_output, prepare_output, reuse_built, settings_id, subset_ids
from .chunk import ChunkTask, source_for
from .executors import run_tasks
from .fingerprint import FIELD, Stale, stale_shards
from .manifest import FORMAT_VERSION, library_versions, write_manifest
from .options import RunOptions
from .schedule import schedule

REMOTE_CHECKS = 8  # remote shards re-hashed at once when a remote build resumes
#: a running build's manifest records its finished shards as chunks finish, but it is rewritten whole (once per chunk:
#: O(chunks²) work), so no more often than writing it takes at most this share of the time; and when the build stops.
#: A driver killed with SIGKILL renders the shards finished since the last write again.
MANIFEST_SHARE = 0.02


@dataclass
class BuildResult:
    """What a build did; ``manifest`` is the written manifest."""

    out_dir: Path | str  # a local directory, or the URL of a remote build
    manifest: dict[str, Any]
    written_shards: int
    reused_shards: int

    @property
    def skipped(self) -> list[dict[str, Any]]:
        return self.manifest["skipped"]

    @property
    def skipped_inputs(self) -> int:
        return self.manifest["counts"]["skipped_inputs"]

    def summary(self) -> str:
        c = self.manifest["counts"]
        line = (
            f"{self.manifest['benchmark']}: {counted(len(self.manifest['subsets']), 'subset')} x "
            f"{counted(c['inputs'], 'input')} -> {counted(c['samples'], 'sample')} in "
            f"{counted(self.written_shards + self.reused_shards, 'shard')} "
            f"({self.written_shards} written, {self.reused_shards} reused) at {self.out_dir}"
        )
        line += f"; skipped {c['skipped_inputs']} of {counted(c['inputs'], 'input')}"
        if c["failed_samples"]:
            line += f" and {counted(c['failed_samples'], 'sample')}"
        if c["skipped_inputs"] or c["failed_samples"]:
            line += " (reasons in manifest.json 'skipped')"
        return line


# ---------------------------------------------------------------- driver side


def _chunks(n: int, size: int) -> Iterator[tuple[int, int, int]]:
    for chunk in range(math.ceil(n / size)):
        yield chunk, chunk * size, min(n, (chunk + 1) * size)


def _finished_shards(out: Path | Location, previous: dict[str, Any] | None) -> dict[str, dict]:
    """Shards recorded in a previous manifest whose file still matches its checksum.

    A remote shard is streamed and re-hashed (a matching size alone is not trusted: correctness before speed; up to
    ``REMOTE_CHECKS`` at a time); one whose size already differs from the record is rebuilt without reading it.
    """
    done: dict[str, dict] = {}
    recorded = (previous or {}).get("shards", {})
    for rel, rec in recorded.items():
        if rec.get("samples", 0) == 0 and rec.get("sha256") is None:
            done[rel] = rec
        elif isinstance(out, Path) and is_regular(out / rel) and sha256_regular(out / rel) == rec.get("sha256"):
            done[rel] = rec
    if isinstance(out, Location):
        todo = [rel for rel in recorded if rel not in done]

        def intact(rel: str) -> bool:
            rec = recorded[rel]
            return out.size(rel) == rec.get("bytes") and out.sha256(rel) == rec.get("sha256")

        with ThreadPoolExecutor(max_workers=REMOTE_CHECKS) as pool:
            done.update({rel: recorded[rel] for rel, ok in zip(todo, pool.map(intact, todo), strict=True) if ok})
    return done


def _assemble(
    plan: Plan, source: Source, shards: dict, skipped: list, complete: bool, invocation: dict | None = None
) -> dict[str, Any]:
    # an input that does not decode is skipped by every task of its chunk: listed once
    unique = {tuple(sorted(s.items())): s for s in skipped}
    skipped = sorted(unique.values(), key=lambda s: (s["chunk"], s["key"], s["subset"] or ""))
    plan_dict, per_subset = plan.to_dict(), {s.name: 0 for s in plan.subsets}
    ids, files = subset_ids(plan_dict), {s.name: [] for s in plan.subsets}
    for rel, rec in shards.items():
        per_subset[rec["subset"]] += rec["samples"]
        if rec["samples"]:
            files[rec["subset"]].append(rel)
    subsets = {
        s.name: {
            "id": ids[s.name],
            "corruption": s.corruption,
            "severity": s.severity,
            "category": s.category,
            "samples": per_subset[s.name],
            "shards": sorted(files[s.name]),
        }
        for s in plan.subsets
    }
    bad_inputs = {s["key"] for s in skipped if s["subset"] is None}
    return {
        "corruptgen_manifest": FORMAT_VERSION,
        "benchmark": plan.benchmark,
        "plan_id": plan.plan_id,
        "settings_id": settings_id(plan_dict),
        "plan": plan_dict,
        "source": source.describe(),
        "complete": complete,
        "counts": {
            "inputs": len(source),
            "skipped_inputs": len(bad_inputs),
            "failed_samples": sum(1 for s in skipped if s["subset"] is not None),
            "samples": sum(per_subset.values()),
            "per_subset": per_subset,
        },
        "subsets": subsets,
        "shards": dict(sorted(shards.items())),
        "skipped": skipped,
        "versions": library_versions(),
        **({"invocation": invocation} if invocation else {}),
    }


def render(
    plan: Plan,
    out_dir: str | os.PathLike,
    run: RunOptions | None = None,
    *,
    overwrite: bool = False,
    wait_lock: float = 0,
    force_unlock: bool = False,
    invocation: dict[str, Any] | None = None,
    finish: Callable[[BuildResult], None] | None = None,
) -> BuildResult:
    """Execute ``plan`` into ``out_dir`` (resuming a previous, interrupted build of the same plan, or adding subsets
    to a build of the same settings: see :mod:`corruptgen.engine.build_dir`), holding the directory's build lock
    (:mod:`corruptgen.io.lock`; ``wait_lock`` seconds to wait for it, ``force_unlock`` removes a stale remote lock).

    ``run`` (workers, device, batching, engine) changes speed only, never the bytes. ``invocation`` (the build command,
    :mod:`corruptgen.engine.invocation`) is recorded in the manifest; ``finish`` (e.g. writing the dataset card) runs on
    the result while the lock is still held.
    """
    run = run or RunOptions()
    local = local_path(out_dir)
    out: Path | Location = local if local is not None else _open_remote(str(out_dir), run.workers, run.engine)
    target = out if isinstance(out, Path) else str(out)  # what the manifest functions and the tasks are given
    previous = check_output(out, plan)  # read-only: nothing is written before the lock is held
    plan, invocation = reuse_built(out, previous, plan, invocation, overwrite)  # subsets already built: keep the rest
    source = source_for(plan, refresh=True)  # as it is now: an earlier build in this process may have listed it
    n = len(source)
    if n == 0:
        raise CorruptgenError(f"source {plan.source.spec!r} has no images")
    benchmark = find_benchmark(plan.benchmark)
    if benchmark is not None:
        benchmark.check_source(plan, source)
    with build_lock(out, wait=wait_lock, force_unlock=force_unlock):
        previous = prepare_output(out, plan, n, overwrite=overwrite)
        result = _execute(plan, out, target, source, previous, run, invocation)
        if finish is not None:
            finish(result)
        return result


def _execute(
    plan: Plan,
    out: Path | Location,
    target: Path | str,
    source: Source,
    previous: dict[str, Any] | None,
    run: RunOptions,
    invocation: dict[str, Any] | None,
) -> BuildResult:
    """Render what ``previous`` (the kept part of an earlier manifest) lacks; the caller holds the build lock."""
    n = len(source)
    shards = _finished_shards(out, previous)
    _drop_stale(out, shards, stale_shards(plan, source, shards, (previous or {}).get("source")))
    tasks, reused = [], 0
    for chunk, start, stop in _chunks(n, plan.shard_size):
        todo = tuple(s.name for s in plan.subsets if shard_relpath(s.name, chunk, plan.split) not in shards)
        reused += len(plan.subsets) - len(todo)
        if todo:
            tasks.append(ChunkTask(plan, str(target), chunk, start, stop, todo, run.render, source.listing_id()))
    tasks = _share_out(tasks, run.workers)
    redo = {(t.chunk, name) for t in tasks for name in t.subsets}
    redo_chunks, chunks = {t.chunk for t in tasks}, math.ceil(n / plan.shard_size)
    skipped = [
        s for s in (previous or {}).get("skipped", []) if s["chunk"] < chunks
        and (s["chunk"] not in redo_chunks or (s["subset"] is not None and (s["chunk"], s["subset"]) not in redo))
    ]  # fmt: skip
    if tasks:  # nothing to render (a re-run, a resume after the last shard): only the final manifest is written
        write_manifest(target, _assemble(plan, source, shards, skipped, False, invocation))

    bar = progress_bar(sum(t.counted for t in tasks), enabled=run.progress, desc=plan.benchmark, unit="img")
    if trace.PATH is not None:
        trace.event("render_start", workers=run.workers, tasks=[[t.name, t.stop - t.start, len(t.subsets)]
                                                                for t in tasks])  # fmt: skip
    results = run_tasks(tasks, engine=run.engine, workers=run.workers, bar=bar, ray=run.ray)
    due = time.monotonic()
    try:
        with closing(results):  # an exception here (Ctrl-C included) stops the running chunks at once
            for result in results:
                shards.update(result["shards"])
                skipped.extend(result["skipped"])
                if time.monotonic() >= due:
                    start = time.monotonic()
                    write_manifest(target, _assemble(plan, source, shards, skipped, False, invocation))
                    due = time.monotonic() + (time.monotonic() - start) / MANIFEST_SHARE
        trace.event("render_end")
    except BaseException as e:
        if not isinstance(e, UnreachableError):  # a location that stopped answering is not asked again (one deadline)
            with suppress(Exception):  # keep what finished for the next run; the error that stopped it is raised
                write_manifest(target, _assemble(plan, source, shards, skipped, False, invocation))
        raise
    finally:
        bar.close()
    manifest = _assemble(plan, source, shards, skipped, True, invocation)
    write_manifest(target, manifest)
    return BuildResult(out_dir=target, manifest=manifest, written_shards=sum(len(t.subsets) for t in tasks),
                       reused_shards=reused)  # fmt: skip


def _share_out(tasks: list[ChunkTask], workers: int) -> list[ChunkTask]:
    """The tasks in the order to hand them out to ``workers``, longest first, the tail cut at subset boundaries so that
    every worker renders to the end (:func:`corruptgen.schedule.schedule`). A shard is one subset of one chunk either
    way: the same shards, bytes and manifest; each part of a chunk decodes the chunk's inputs itself."""
    if not tasks:
        return tasks
    return schedule(tasks, workers)


def _drop_stale(out: Path | Location, shards: dict[str, dict], stale: Stale) -> None:
    """Forget (and delete: they are this build's own files) the shards the source no longer matches, saying so in one
    line; note the shards an earlier corruptgen recorded without a fingerprint (kept unchecked)."""
    unchecked = sum(1 for rel, rec in shards.items() if FIELD not in rec and rel not in stale)
    if unchecked:
        _note(f"{_shards(unchecked)} of this build have no source fingerprint (an earlier corruptgen rendered them): "
              "kept unchecked (--overwrite renders them from the source as it is now)")  # fmt: skip
    if not stale:
        return
    _note(f"the source changed since {_shards(len(stale))} were rendered ({'; '.join(stale.lines)}); rendering them "
          "again")  # fmt: skip
    for rel in stale:
        del shards[rel]
        if isinstance(out, Location):
            if out.exists(rel):
                out.fs.rm(out.path(rel))
        else:
            (out / rel).unlink(missing_ok=True)


def _note(line: str) -> None:
    print(f"corruptgen: {line}", file=sys.stderr)


def _shards(n: int) -> str:
    return counted(n, "shard")


def _open_remote(url: str, workers: int, engine: str) -> Location:
    """The remote output location, checked to be reachable before any work (one clear line if it is not)."""
    out = location(url)
    protocols = (out.fs.protocol,) if isinstance(out.fs.protocol, str) else tuple(out.fs.protocol)
    if "memory" in protocols and (workers > 1 or engine != "local"):
        raise CorruptgenError(f"{url}: memory:// exists only inside this process; use --workers 1 --engine local")
    try:
        is_file = out.isfile()
    except Exception as e:  # e.g. missing credentials, no such bucket, no network
        raise CorruptgenError(f"cannot access {url}: {type(e).__name__}: {e}") from None
    if is_file:
        raise CorruptgenError(f"output path {url} exists and is not a directory")
    return out

"""The schedule of chunk tasks over workers (corruptgen.engine.schedule): longest first, the tail cut at subset
boundaries only where a worker would idle, every shard exactly once; and whatever the order and the cuts, a build's
bytes and manifest are those of --workers 1."""

from __future__ import annotations

import json
import math

import pytest

import corruptgen
from corruptgen.engine import trace
from corruptgen.engine.chunk import ChunkTask
from corruptgen.engine.schedule import DECODE, cost, makespan, schedule


def _tasks(inputs: int, shard: int, subsets: int, skip: dict[int, int] | None = None) -> list[ChunkTask]:
    """One task per chunk; ``skip``: chunk -> number of its subsets already built (a resumed build)."""
    names = tuple(f"s{i:02d}" for i in range(subsets))
    return [ChunkTask(plan=None, out_dir="o", chunk=c, start=c * shard, stop=min(inputs, (c + 1) * shard),
                      subsets=names[(skip or {}).get(c, 0):]) for c in range(math.ceil(inputs / shard))]  # fmt: skip


def _shards(tasks: list[ChunkTask]) -> list[tuple[int, str]]:
    return sorted((t.chunk, s) for t in tasks for s in t.subsets)


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 6, 8, 12, 16])
@pytest.mark.parametrize(("inputs", "shard", "subsets"), [(400, 50, 76), (380, 48, 76), (50_000, 1000, 76),
                                                          (10, 3, 5), (24, 16, 21), (7, 7, 1)])  # fmt: skip
def test_every_shard_once_and_the_workers_end_together(inputs, shard, subsets, workers):
    tasks = _tasks(inputs, shard, subsets)
    done = schedule(tasks, workers)
    assert _shards(done) == _shards(tasks)
    whole = {t.chunk: t for t in tasks}
    for t in done:  # a part keeps its chunk's inputs and takes an even spread of its subsets, in their order
        assert (t.start, t.stop) == (whole[t.chunk].start, whole[t.chunk].stop)
        assert list(t.subsets) == sorted(t.subsets)
        assert (t.part == "") == (t.subsets == whole[t.chunk].subsets)
    ideal = (inputs * subsets + inputs * DECODE) / workers  # the work split by inputs: nothing decoded twice
    bound = max(max(cost(t) for t in done), ideal)  # no schedule ends before its longest task
    # at most two decodes of a chunk more per worker than the ideal split (the cut pieces read their chunk again)
    assert makespan(done, workers) <= bound + 2 * shard * DECODE + 1e-9
    if workers == 1 or (len(tasks) % workers == 0 and len({cost(t) for t in tasks}) == 1):
        assert done == tasks  # nothing to cut: the same tasks, in chunk order


def test_longest_first_and_parts_named_in_the_order_they_are_handed_out():
    # a resumed build: chunk 0 has 2 of its 8 subsets left, chunk 2 is the short last chunk
    tasks = _tasks(10, 4, 8, skip={0: 6})
    assert [t.chunk for t in schedule(tasks, 2)] == [1, 2, 0]  # costs 4·(8 + 2), 2·(8 + 2), 4·(2 + 2)
    parts = schedule(_tasks(3, 3, 5), 2)
    assert [(p.subsets, p.name) for p in parts] == [(("s00", "s02", "s04"), "chunk 0 (part 1 of 2)"),
                                                    (("s01", "s03"), "chunk 0 (part 2 of 2)")]  # fmt: skip
    assert schedule([], 4) == []


def test_cut_only_where_a_worker_would_idle():
    assert all(t.part == "" for t in schedule(_tasks(400, 50, 76), 8))  # 8 chunks, 8 workers
    assert all(t.part == "" for t in schedule(_tasks(400, 50, 76), 4))  # two rounds each
    cut = schedule(_tasks(400, 50, 76), 3)  # 8 chunks on 3 workers: 6 whole, the last 2 cut into the gaps
    assert [t.part for t in cut[:6]] == [""] * 6 and all(t.part for t in cut[6:])
    assert makespan(cut, 3) < makespan(_tasks(400, 50, 76), 3) * 0.91  # 8/3 chunks each, not 3


def test_a_cut_schedule_keeps_the_bytes_and_the_manifest(tmp_path, monkeypatch):
    """chunks of 2, 2 and 1 inputs on 2 workers: the last chunk is cut in two (the build is traced, so the test sees
    it) and the shards and manifest equal those of --workers 1."""
    kw = dict(subsets="solarize,posterize,iso_noise", shard_size=2, limit=5, card=False)
    corruptgen.build("syn2nat", out=tmp_path / "one", **kw)
    log = tmp_path / "trace.jsonl"
    monkeypatch.setenv(trace.ENV, str(log))  # the workers read it
    monkeypatch.setattr(trace, "PATH", str(log))
    corruptgen.build("syn2nat", out=tmp_path / "two", workers=2, **kw)
    events = trace.read(log)
    handed = next(e for e in events if e["event"] == "render_start")["tasks"]
    assert [name for name, _, _ in handed] == ["chunk 0", "chunk 1", "chunk 2 (part 1 of 2)", "chunk 2 (part 2 of 2)"]
    assert len({e["pid"] for e in events if e["event"] == "task"}) == 2  # every worker rendered
    one, two = tmp_path / "one/syn2nat", tmp_path / "two/syn2nat"
    files = sorted(p.relative_to(one) for p in one.rglob("*.tar"))
    assert files == sorted(p.relative_to(two) for p in two.rglob("*.tar")) and len(files) == 4 * 3
    for rel in files:
        assert (one / rel).read_bytes() == (two / rel).read_bytes()
    assert json.loads((one / "manifest.json").read_text()) == json.loads((two / "manifest.json").read_text())


def test_tracing_off_touches_no_file(monkeypatch):
    monkeypatch.setattr(trace, "PATH", None)
    monkeypatch.setattr("builtins.open", lambda *a, **k: pytest.fail("opened a file"))
    trace.event("task", task="chunk 0")

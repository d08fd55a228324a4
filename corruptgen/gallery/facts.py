"""The facts a gallery states about its build, each with a stable id (``fact-<id>`` in the page, a key of
``facts`` in ``gallery.json``): family, source, counts, skipped inputs, plan id, completeness and what ``verify``
found."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.reader import Build
from ..family.benchmark import find_benchmark
from ..io.shown import shown_path
from .evaluated import Evaluation


def category_names(name: str) -> Mapping[int, str]:
    bench = find_benchmark(name)
    return dict(bench.category_names) if bench is not None else {}


def title_of(build: Build) -> str:
    bench = find_benchmark(build.benchmark)
    if bench is not None:
        return f"{bench.title} ({build.benchmark})"
    return build.benchmark or build.location.rstrip("/").rsplit("/", 1)[-1]


def verify_status(build: Build, verify: bool) -> tuple[str, str]:
    """``(value, sentence)``: ``ok``/``failed`` after re-hashing every shard, else why it was not checked."""
    if not build.manifest:
        return "no-manifest", "not verified: the build has no manifest to check the shards against"
    if not verify:
        return "not-checked", "not verified (--no-verify)"
    from ..engine.manifest import verify as verify_build

    try:
        report = verify_build(build.location)
    except Exception as e:  # a Hub repo or store the check cannot list, missing credentials: say so, go on
        first = str(e).splitlines()[0] if str(e) else ""
        return "not-checked", f"not verified: {type(e).__name__}: {first}" if first else "not verified"
    return ("ok" if report.ok else "failed"), report.summary()


def build_facts(
    build: Build, verify: bool, per_subset: int, shown: int, evaluations: Sequence[Evaluation]
) -> tuple[list[tuple[str, str, Any, str]], list[str], str]:
    """``([(id, label, value, shown text)], notes, verify sentence)``."""
    m = build.manifest
    counts = m.get("counts") or {}
    source = m.get("source") or {}
    skipped = m.get("skipped") or []
    names = [n for n in build.subset_names() if build.shards(n)]
    samples = counts.get("samples", sum(build.samples(n) for n in names) if m else None)
    state, sentence = verify_status(build, verify)
    spec = source.get("spec") or (build.plan.get("source") or {}).get("spec")
    where = shown_path(build.location)  # the page is shared: a local build by its relative path or its last name
    used = source.get("count")
    total = source.get("total")
    facts: list[tuple[str, str, Any, str]] = [
        ("family", "family", build.benchmark, title_of(build)),
        ("location", "build", where, where),
        ("source", "source", spec, f"{spec} ({used} of {total} images)" if used is not None and total else spec),
        ("plan-id", "plan id", m.get("plan_id"), m.get("plan_id") or "– (no manifest)"),
        (
            "complete",
            "complete",
            m.get("complete"),
            {True: "yes", False: "no (re-run the build to finish it)"}.get(m.get("complete"), "–"),
        ),
        ("verify", "verify", state, sentence),
        ("subsets", "subsets", len(names), f"{len(names)}: {', '.join(names)}"),
        ("inputs", "inputs", counts.get("inputs"), _or_dash(counts.get("inputs"))),
        ("samples", "samples", samples, _or_dash(samples)),
        (
            "skipped-inputs",
            "skipped inputs",
            counts.get("skipped_inputs", len(skipped)),
            _skipped_text(counts.get("skipped_inputs", len(skipped)), skipped),
        ),
        ("failed-samples", "failed samples", counts.get("failed_samples"), _or_dash(counts.get("failed_samples"))),
        ("shown", "samples shown", shown, f"{shown} ({per_subset} per cell at most)"),
    ]
    for i, ev in enumerate(evaluations):
        facts.append(
            (f"model-{i}", "model", ev.model, f"{ev.model} ({shown_path(ev.path)})" + (" — marks" if i == 0 else ""))
        )
    notes = [f"{ev.model}: {note}" for ev in evaluations for note in ev.notes]
    return facts, notes, sentence


def _or_dash(value: Any) -> str:
    return "–" if value is None else str(value)


def _skipped_text(count: Any, skipped: list[dict[str, Any]]) -> str:
    if not count:
        return "none"
    reasons: dict[str, int] = {}
    for s in skipped:
        why = str(s.get("reason") or "no reason recorded")
        reasons[why] = reasons.get(why, 0) + 1
    return f"{count}: " + "; ".join(f"{n} × {why}" for why, n in reasons.items())

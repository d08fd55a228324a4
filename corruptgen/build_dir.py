"""The build directory before a build: what of an earlier build in it is kept, and incremental builds.

A plan's identity is split in two: the *settings* (source, seed, preprocessing, codec, shard size, split, pixel cap) and
each *subset* (its record holds everything else that decides its bytes: corruption, severity, options, samples per
input). Family options (``--severities``, ``--extra``, ``--per-image``, ...) only choose subsets and are copied into
their records, so they are not settings: ``--severities 1`` then ``--severities 1,3`` adds subsets. A sample's bytes
depend only on the settings and its own subset, so a build whose settings equal the earlier build's keeps every shard of
the subsets both share, untouched, and renders only its new subsets (no ``--overwrite``). A build that drops or changes
a subset of the earlier one, or changes a setting, needs ``--overwrite``, which deletes only the shards the manifest
records for what is replaced (see :mod:`corruptgen.io.ownership`). The whole plan keeps its ``plan_id``; the manifest
adds ``settings_id`` and an ``id`` per subset.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from .errors import CorruptgenError
from .io.layout import shard_relpath
from .io.ownership import delete_recorded, refuse_symlinks, remove_stale_partials
from .io.storage import Location
from .manifest import MANIFEST, load_manifest
from .plan import Plan


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


_NOT_SETTINGS = ("subsets", "family_options")  # what a plan's subset records carry


def settings_id(plan: dict[str, Any]) -> str:
    """sha256 (16 hex digits) of a plan's settings: its canonical JSON without the subsets and the options that only
    chose them."""
    return _digest({k: v for k, v in plan.items() if k not in _NOT_SETTINGS})


def subset_ids(plan: dict[str, Any]) -> dict[str, str]:
    """Each subset's id: the settings id and the subset's own record, hashed together."""
    common = settings_id(plan)
    return {s["name"]: _digest({"settings": common, "subset": s}) for s in plan["subsets"]}


def check_output(out: Path | Location, plan: Plan) -> None:
    """Read-only checks before a build touches ``out``: not a file, a valid manifest, no symlinked ``data/``."""
    if isinstance(out, Location):
        load_manifest(out.url)  # fails in one line on a bad manifest
        return
    if out.exists() and not out.is_dir():
        raise CorruptgenError(f"output path {out} exists and is not a directory")
    _refuse_links(out, plan, load_manifest(out) if out.exists() else None)


def _refuse_links(out: Path, plan: Plan, manifest: dict[str, Any] | None) -> None:
    recorded = {rec["subset"] for rec in (manifest or {}).get("shards", {}).values()}
    refuse_symlinks(out, sorted({s.name for s in plan.subsets} | recorded))


def prepare_output(out: Path | Location, plan: Plan, inputs: int, *, overwrite: bool) -> dict[str, Any] | None:
    """Under the build lock: the part of the earlier build's manifest this build keeps (``None`` if nothing).

    Refuses (without ``overwrite``) a build that would replace part of the earlier one; with it, deletes only the
    replaced subsets' recorded shards. Locally, also removes partial files left by a killed build.
    """
    previous = load_manifest(out if isinstance(out, Path) else out.url)
    if isinstance(out, Path):
        _refuse_links(out, plan, previous)  # again: the folder may have changed before the lock was held
    if previous is not None:
        previous = _keep(out, previous, plan, overwrite, inputs)
    if isinstance(out, Path):
        chunks = range(math.ceil(inputs / plan.shard_size))
        planned = [shard_relpath(s.name, c, plan.split) for s in plan.subsets for c in chunks]
        remove_stale_partials(out, [*planned, *(previous or {}).get("shards", {}), MANIFEST])
    return previous


def _keep(
    out: Path | Location, previous: dict[str, Any], plan: Plan, overwrite: bool, inputs: int
) -> dict[str, Any] | None:
    old_plan, new_plan = previous.get("plan"), json.loads(json.dumps(plan.to_dict()))  # tuples as JSON lists
    if previous["plan_id"] == plan.plan_id:
        return previous
    new_ids = subset_ids(new_plan)
    if old_plan is not None and settings_id(old_plan) == settings_id(new_plan):
        old_ids = subset_ids(old_plan)
        kept = {name for name, sid in old_ids.items() if new_ids.get(name) == sid}
        replaced = sorted(set(old_ids) - kept)
        why = f"it has subsets this build drops or changes: {', '.join(replaced)} (adding subsets needs no --overwrite)"
    else:
        kept, replaced = set(), ["all"]
        why = f"other settings ({_differences(old_plan or {}, new_plan)})"
        if _changed(old_plan or {}, new_plan) == ["shard_size"] and previous.get("source", {}).get("count") != inputs:
            why += (f"; the source has {inputs} inputs now and the default --shard-size follows their number: "
                    f"--shard-size {old_plan['shard_size']} resumes the earlier build")  # fmt: skip
    if not replaced:
        return previous
    if not overwrite:
        raise CorruptgenError(
            f"{out} already holds a different build (plan {previous['plan_id']}, this is {plan.plan_id}): {why}; "
            "use --overwrite to replace it or choose another --out"
        )
    shards = previous["shards"]
    doomed = [rel for rel, rec in shards.items() if rec["subset"] not in kept]
    delete_recorded(out, doomed, shards, lambda line: print(f"corruptgen: {line}", file=sys.stderr))
    if not kept:
        return None
    skipped = [s for s in previous.get("skipped", []) if s["subset"] is None or s["subset"] in kept]
    return {
        **previous,
        "shards": {rel: rec for rel, rec in shards.items() if rec["subset"] in kept},
        "skipped": skipped,
    }


def _changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if k not in _NOT_SETTINGS and old.get(k) != new.get(k))


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = _changed(old, new)
    return ", ".join(keys[:4]) + " differ" if keys else "an older manifest"

"""The build directory before a build: what of an earlier build in it is kept, and incremental builds.

A plan's identity is split in two: the *settings* (source, seed, preprocessing, codec, shard size, split, pixel cap) and
each *subset* (its record holds everything else that decides its bytes: corruption, severity, options, samples per
input). Family options (``--severities``, ``--extra``, ``--per-image``, ...) only choose subsets and are copied into
their records, so they are not settings: ``--severities 1`` then ``--severities 1,3`` adds subsets. A sample's bytes
depend only on the settings and its own subset, so a build whose settings equal the earlier build's keeps every shard of
the subsets both share, untouched, and renders only its new subsets (no ``--overwrite``); one that asks only for
subsets already built builds the earlier plan, so it renders nothing new and keeps the rest (:func:`reuse_built`). A
build that changes a subset or a setting, or drops subsets while adding others, is refused naming what differs, or
with ``--overwrite`` deletes only the shards the manifest records for what is replaced (see
:mod:`corruptgen.io.ownership`). The whole plan keeps its ``plan_id``; the manifest
adds ``settings_id`` and an ``id`` per subset.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..family.plan import NOT_SETTINGS, Plan, digest, settings_id, subset_ids
from ..io.layout import shard_relpath
from ..io.ownership import delete_recorded, refuse_symlinks, remove_stale_partials
from ..io.shown import recorded_value
from ..io.sources import recorded_spec
from ..io.storage import Location
from .invocation import record
from .manifest import MANIFEST, load_manifest


def check_output(out: Path | Location, plan: Plan) -> dict[str, Any] | None:
    """Read-only checks before a build touches ``out``: not a file, a valid manifest, no symlinked ``data/``; returns
    the manifest found there (``None``: none)."""
    if isinstance(out, Location):
        return load_manifest(out.url)  # fails in one line on a bad manifest
    if out.exists() and not out.is_dir():
        raise CorruptgenError(f"output path {out} exists and is not a directory")
    manifest = load_manifest(out) if out.exists() else None
    _refuse_links(out, plan, manifest)
    return manifest


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


def reuse_built(
    out: Path | Location,
    previous: dict[str, Any] | None,
    plan: Plan,
    invocation: dict[str, Any] | None,
    overwrite: bool,
) -> tuple[Plan, dict[str, Any] | None]:
    """The plan (and recorded command) to build into ``out``, whose manifest is ``previous``: a build that asks only
    for subsets ``out`` already holds with the same settings builds the earlier plan instead, so what it asks for is
    reused (rendered again only where a shard is missing) and the other subsets are kept; anything else, or
    ``overwrite``, keeps ``plan``."""
    if overwrite or previous is None or previous["plan_id"] == plan.plan_id or previous.get("plan") is None:
        return plan, invocation
    old, new = _as_recorded(previous["plan"]), _as_json(plan)
    old_ids, new_ids = subset_ids(old), subset_ids(new)
    if settings_id(old) != settings_id(new) or any(old_ids.get(name) != sid for name, sid in new_ids.items()):
        return plan, invocation
    try:  # the same settings, so the same recorded source: read from where this build reads it
        built = dataclasses.replace(Plan.from_dict(old), source=plan.source)
        # the same settings, so the same subsets: run as this build asks (a recorded torchscript path is its last
        # component; the model is pinned by its weights' sha256)
        asked, now = {s.name: s for s in plan.subsets}, dict(plan.family_options)
        same = lambda k, v: k in now and recorded_value(now[k]) == recorded_value(v)  # noqa: E731
        built = dataclasses.replace(built, subsets=tuple(asked.get(s.name, s) for s in built.subsets),
                                    family_options=tuple((k, now[k] if same(k, v) else v)
                                                         for k, v in built.family_options))  # fmt: skip
    except CorruptgenError:  # a plan this version cannot rebuild: prepare_output refuses, naming what differs
        return plan, invocation
    if built.plan_id != (previous["plan_id"] if old is previous["plan"] else digest(old)):
        return plan, invocation
    others = [name for name in old_ids if name not in new_ids]
    kept = f"{len(others)} other subset{'s' if len(others) != 1 else ''} ({_names(others)})"
    if previous.get("complete"):
        are = "is" if len(others) == 1 else "are"
        note = f"already holds {', '.join(new_ids)} with these settings: nothing to render; its {kept} {are} kept"
    else:
        note = f"holds an unfinished build of {', '.join(new_ids)} and {kept} with these settings: finishing it"
    print(f"corruptgen: {out} {note}", file=sys.stderr)
    earlier = previous.get("invocation")
    if isinstance(earlier, dict) and isinstance(earlier.get("arguments"), dict):  # its source as recorded now
        earlier = record(str(earlier.get("benchmark") or built.benchmark), earlier["arguments"])
    return built, earlier


def _as_recorded(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    """An earlier build's plan with its source as this corruptgen records it (earlier ones recorded a local path as
    given, absolute ones included): the same command, run from the same folder, resumes and keeps such a build (the
    shards' source fingerprints still decide what is rendered again)."""
    source = (plan or {}).get("source")
    spec = source.get("spec") if isinstance(source, dict) else None
    if not isinstance(spec, str) or recorded_spec(spec) == spec:
        return plan
    return {**plan, "source": {**source, "spec": recorded_spec(spec)}}


def _as_json(plan: Plan) -> dict[str, Any]:
    return json.loads(json.dumps(plan.to_dict()))  # tuples as JSON lists, as in a manifest


def _names(names: list[str], most: int = 6) -> str:
    return ", ".join(names[:most]) + (f", ... ({len(names) - most} more)" if len(names) > most else "")


def _keep(
    out: Path | Location, previous: dict[str, Any], plan: Plan, overwrite: bool, inputs: int
) -> dict[str, Any] | None:
    old_plan, new_plan = _as_recorded(previous.get("plan")), _as_json(plan)
    if previous["plan_id"] == plan.plan_id:
        return previous
    new_ids = subset_ids(new_plan)
    if old_plan is not None and settings_id(old_plan) == settings_id(new_plan):
        old_ids = subset_ids(old_plan)
        kept = {name for name, sid in old_ids.items() if new_ids.get(name) == sid}
        replaced = sorted(set(old_ids) - kept)
        why = _subset_conflict(old_plan, new_plan, replaced)
    else:
        kept, replaced = set(), ["all"]
        why = f"other settings: {_differences(old_plan or {}, new_plan)}"
        if _changed(old_plan or {}, new_plan) == ["shard_size"] and previous.get("source", {}).get("count") != inputs:
            why += (f"; the source has {inputs} inputs now and the default --shard-size follows their number: "
                    f"--shard-size {old_plan['shard_size']} resumes the earlier build")  # fmt: skip
    if not replaced:
        return previous
    if not overwrite:
        raise CorruptgenError(
            f"{out} already holds a different build: {why}; use --overwrite to replace it, or another --out"
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


def _subset_conflict(old: dict[str, Any], new: dict[str, Any], replaced: list[str]) -> str:
    """Why a build of the same settings cannot keep the subsets ``replaced``: changed ones, or ones it leaves out."""
    old_subsets = {s["name"]: s for s in old["subsets"]}
    new_subsets = {s["name"]: s for s in new["subsets"]}
    changed = [name for name in replaced if name in new_subsets]
    if changed:
        name = changed[0]
        keys = sorted(k for k in old_subsets[name].keys() | new_subsets[name].keys()
                      if old_subsets[name].get(k) != new_subsets[name].get(k))  # fmt: skip
        what = ", ".join(f"{k} {_shown(new_subsets[name].get(k))} (built: {_shown(old_subsets[name].get(k))})"
                         for k in keys)  # fmt: skip
        return f"subset {name} rendered otherwise: {what}" + (f" (and {len(changed) - 1} more)" if changed[1:] else "")
    added = [name for name in new_subsets if name not in old_subsets]
    return (f"subsets this build does not ask for ({_names(replaced)}) while it adds {_names(added)}: to keep them "
            "add them to --subsets (a build may add subsets, or ask for some of those built, not both)")  # fmt: skip


#: plan settings -> the ``corruptgen build`` flag that sets them
_SETTING_FLAGS = {"spec": "--source", "limit": "--limit", "image_column": "--image-column",
                  "label_column": "--label-column", "folder_labels": "--folder-labels",
                  "seed": "--seed", "shard_size": "--shard-size",
                  "image_format": "--format", "quality": "--quality", "split": "--split", "max_pixels": "--max-pixels",
                  "max_bytes": "--max-bytes", "preprocess": "--preprocess/--size"}  # fmt: skip


def _changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if k not in NOT_SETTINGS and old.get(k) != new.get(k))


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The settings two plans differ in, as flags with this build's value and the built one's."""

    def flat(plan: dict[str, Any]) -> dict[str, Any]:
        settings = {k: v for k, v in plan.items() if k not in NOT_SETTINGS and k != "source"}
        return {**settings, **(plan.get("source") or {})}

    before, after = flat(old), flat(new)
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if not keys:
        return "an older manifest"
    return ", ".join(f"{_setting(k, after.get(k))} (built: {_shown(before.get(k), k)})" for k in keys)


def _setting(key: str, value: Any) -> str:
    """``--seed 1``; an unset ``--limit`` is ``no --limit``."""
    flag = _SETTING_FLAGS.get(key, key)
    return f"no {flag}" if value is None and key == "limit" else f"{flag} {_shown(value, key)}"


#: what an unset plan setting means, where "none" would mislead
_UNSET = {"limit": "no limit", "folder_labels": "False", "image_column": "auto", "label_column": "auto"}


def _shown(value: Any, key: str = "") -> str:
    if isinstance(value, dict) and "name" in value:  # a preprocessing preset
        return f"{value['name']}" + (f" {value['crop']}px" if value.get("crop") else "")
    return _UNSET.get(key, "none") if value is None else str(value)

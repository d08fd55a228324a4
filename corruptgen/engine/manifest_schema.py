"""The shape a ``manifest.json`` must have before anything reads or acts on it (build, resume, verify, readers).

A manifest of the wrong shape (valid JSON but ``"shards": []``, a shard record that is a string, a missing key, a
wrong type, a shard path outside ``data/<subset>/``) is rejected with one line naming the first problem, before any
file is written or deleted: a build acts on the shard paths a manifest lists, so they must be paths it could have
written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import CorruptgenError

#: a shard path the engine writes: ``data/<subset>/<name>.tar`` (no hidden parts, no ``..``)
SHARD_PATH = re.compile(r"^data/(?![.])[^/\\]+/(?![.])[^/\\]+\.tar$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PRINTS = re.compile(
    r"^[0-9a-f-]*$"
)  # each input's print (corruptgen.engine.source_diff): hex digits, "-" for unread bytes


class ManifestShapeError(ValueError):
    """A manifest value of the wrong type or form; ``str()`` says where and what."""


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _need(ok: bool, where: str, expected: str, value: Any) -> None:
    if not ok:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ManifestShapeError(f"{where}: expected {expected}, got {type(value).__name__} {shown}")


def _fields(record: Any, where: str, required: dict[str, Callable], optional: dict[str, Callable]) -> None:
    _need(isinstance(record, dict), where, "an object", record)
    for key, check in {**required, **optional}.items():
        if key in record:
            check(record[key], f"{where}.{key}")
        elif key in required:
            raise ManifestShapeError(f"{where}: missing {key!r}")


def _typed(predicate: Callable[[Any], bool], expected: str) -> Callable[[Any, str], None]:
    return lambda value, where: _need(predicate(value), where, expected, value)


_STR = _typed(lambda v: isinstance(v, str), "a string")
_OPT_STR = _typed(lambda v: v is None or isinstance(v, str), "a string or null")
_COUNT = _typed(_int, "a non-negative integer")
_BOOL = _typed(lambda v: isinstance(v, bool), "true or false")
_DICT = _typed(lambda v: isinstance(v, dict), "an object")
_EACH = _typed(lambda v: isinstance(v, str) and len(v) % 16 == 0 and bool(_PRINTS.match(v)), "inputs' prints")
_SHA = _typed(lambda v: v is None or (isinstance(v, str) and bool(_HEX64.match(v))), "a sha256 hex digest or null")


def _shard_path(value: Any, where: str) -> None:
    _need(
        isinstance(value, str) and bool(SHARD_PATH.match(value)), where, "a shard path data/<subset>/<name>.tar", value
    )


def _shards(value: Any, where: str) -> None:
    _need(isinstance(value, dict), where, "an object of shard records", value)
    for rel, record in value.items():
        _shard_path(rel, f"{where} key")
        _fields(record, f"{where}[{rel!r}]", {"sha256": _SHA, "bytes": _COUNT, "samples": _COUNT, "subset": _STR},
                {"chunk": _COUNT, "source": _read_from, "facts": _DICT})  # fmt: skip
        if record["subset"] != rel.split("/")[1]:
            raise ManifestShapeError(f"{where}[{rel!r}].subset: {record['subset']!r} does not match the shard's folder")


def _read_from(value: Any, where: str) -> None:
    """A shard's source fingerprint (:mod:`corruptgen.engine.fingerprint`)."""
    _fields(value, where, {}, {"inputs": _STR, "content": _STR, "unread": _strings, "each": _EACH})


def _strings(value: Any, where: str) -> None:
    _need(isinstance(value, list) and all(isinstance(v, str) for v in value), where, "a list of strings", value)


def _subsets(value: Any, where: str) -> None:
    _need(isinstance(value, dict), where, "an object of subsets", value)
    for name, record in value.items():
        _fields(record, f"{where}[{name!r}]", {}, {"samples": _COUNT, "shards": _shard_list, "id": _STR})


def _shard_list(value: Any, where: str) -> None:
    _need(isinstance(value, list), where, "a list of shard paths", value)
    for i, rel in enumerate(value):
        _shard_path(rel, f"{where}[{i}]")


def _skipped(value: Any, where: str) -> None:
    _need(isinstance(value, list), where, "a list", value)
    for i, record in enumerate(value):
        _fields(record, f"{where}[{i}]", {"chunk": _COUNT, "key": _STR, "subset": _OPT_STR}, {"reason": _STR})


def _plan(value: Any, where: str) -> None:
    _need(isinstance(value, dict), where, "an object", value)
    _need(isinstance(value.get("subsets"), list), f"{where}.subsets", "a list", value.get("subsets"))
    for i, subset in enumerate(value["subsets"]):
        _fields(subset, f"{where}.subsets[{i}]", {"name": _STR}, {})


_TOP_REQUIRED = {"plan_id": _STR, "shards": _shards}
_TOP_OPTIONAL = {"benchmark": _STR, "complete": _BOOL, "plan": _plan, "subsets": _subsets, "skipped": _skipped,
                 "counts": _DICT, "source": _DICT, "versions": _DICT, "settings_id": _STR,
                 "corruptgen_manifest": _COUNT, "invocation": _DICT}  # fmt: skip
#: every top-level field this corruptgen writes: any other one comes from a newer corruptgen
KNOWN_FIELDS = frozenset(_TOP_REQUIRED) | frozenset(_TOP_OPTIONAL)


def validate_manifest(data: Any, where: str) -> dict[str, Any]:
    """``data`` if it has a manifest's shape, else :class:`CorruptgenError` (one line: the file and the problem)."""
    try:
        _fields(data, "manifest", _TOP_REQUIRED, _TOP_OPTIONAL)
    except ManifestShapeError as e:
        raise CorruptgenError(f"{where} is not a valid corruptgen manifest ({e})") from None
    planned = {s["name"] for s in data["plan"]["subsets"]} if "plan" in data else None
    stray = next(
        (rel for rel, rec in data["shards"].items() if planned is not None and rec["subset"] not in planned), None
    )
    if stray is not None:
        raise CorruptgenError(f"{where} is not a valid corruptgen manifest (shard {stray} of a subset not in its plan)")
    return data

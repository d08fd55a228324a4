"""The ``corruptgen build`` command a build was made with, recorded in its manifest (``invocation``) so that cards
and users can repeat it exactly; the CLI and the Python API record the same arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..io.decode import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS

#: ``build()`` arguments that shape the plan, their CLI flags and defaults (a default is left out of the command).
FLAGS: dict[str, tuple[str, Any]] = {
    "source": ("--source", "samples"),
    "subsets": ("--subsets", None),
    "limit": ("--limit", None),
    "seed": ("--seed", 0),
    "image_format": ("--format", None),
    "quality": ("--quality", 85),
    "shard_size": ("--shard-size", None),
    "split": ("--split", "test"),
    "preprocess": ("--preprocess", None),
    "image_column": ("--image-column", None),
    "label_column": ("--label-column", None),
    "folder_labels": ("--folder-labels", False),
    "max_pixels": ("--max-pixels", DEFAULT_MAX_PIXELS),
    "max_bytes": ("--max-bytes", DEFAULT_MAX_BYTES),
}


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def record(benchmark: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's ``invocation``: the plan-shaping arguments that differ from their defaults, JSON-safe; the
    source as the plan records it (:func:`~corruptgen.io.sources.recorded_spec`: no absolute path)."""
    from ..io.shown import recorded_value
    from ..io.sources import recorded_spec

    defaults = {key: default for key, (_, default) in FLAGS.items()} | {"clean": True}
    kept = {}
    for key, value in arguments.items():
        if value is None or (value is False and key != "clean") or value == defaults.get(key):
            continue
        if key == "source":
            value = recorded_spec(str(value))
        else:  # a family option naming a local file (--surrogate torchscript:/abs/m.pt)
            value = recorded_value(value)
        kept[key] = list(value) if isinstance(value, (list, tuple)) else value
    return {"benchmark": benchmark, "arguments": kept, "command": command(benchmark, kept)}


def command(benchmark: str, arguments: Mapping[str, Any], *, source: str | None = None) -> str:
    """``corruptgen build <benchmark> ...`` for recorded ``arguments`` (``source`` replaces the recorded source)."""
    args = dict(arguments)
    if source is not None:
        args["source"] = source
    words = ["corruptgen", "build", benchmark]
    order = [*FLAGS, "clean"]

    def rank(item: tuple[str, Any]) -> tuple[int, str]:
        return (order.index(item[0]) if item[0] in order else len(order), item[0])

    for key, value in sorted(args.items(), key=rank):
        if key == "clean":
            if value is False:
                words.append("--no-clean")
            continue
        flag = FLAGS[key][0] if key in FLAGS else "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        else:
            text = _text(value)
            words += [flag, f"'{text}'" if any(c in text for c in " {}*?") else text]
    return " ".join(words)

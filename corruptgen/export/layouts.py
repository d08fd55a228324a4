"""The export layout registry: a layout turns a build into a folder tree other tools read.

A layout is one function ``fn(build, out, subsets, options) -> None``:

* ``build`` -- the :class:`corruptgen.engine.reader.Build` (read samples with ``build.iter_samples(subset, want)``),
* ``out`` -- the :class:`corruptgen.export.outdir.ExportDir` every file goes through (``put`` / ``open`` keep
  writes atomic, idempotent and safe; ``skip`` / ``note`` / ``folder`` fill the report),
* ``subsets`` -- the subsets to export, in plan order,
* ``options`` -- the layout's own options (strings), already checked against the names it declares.

A family folder registers its own layout (``@register_layout("cifar-c", ...)`` in a module its ``__init__``
imports); the registry finds it on the first look-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CorruptgenError
from ..registry import Registry

if TYPE_CHECKING:
    from ..engine.reader import Build
    from .outdir import ExportDir

LayoutFn = Callable[["Build", "ExportDir", list[str], dict[str, str]], None]


@dataclass(frozen=True)
class Layout:
    """A registered layout: its function, a one-line description and the options it accepts (name -> help)."""

    name: str
    fn: LayoutFn
    summary: str
    options: Mapping[str, str] = field(default_factory=dict)

    def parse_options(self, given: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
        """``{"k": "v"}`` or ``["k=v", ...]`` (CLI ``--option k=v``) checked against the declared names."""
        pairs: dict[str, str] = {}
        for item in [] if given is None else given.items() if isinstance(given, Mapping) else given:
            key, value = item if isinstance(item, tuple) else _split_option(item)
            if key not in self.options:
                known = ", ".join(self.options) or "none"
                raise CorruptgenError(f"layout {self.name} has no option {key!r} (its options: {known})")
            pairs[key] = str(value)
        return pairs


def _split_option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise CorruptgenError(f"--option expects KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


#: Export layouts by name; family folders register theirs (discovered on the first look-up).
LAYOUTS: Registry[Layout] = Registry(
    "export layout", discover=("corruptgen.export", "corruptgen.families"), hint="see `corruptgen export --layouts`"
)


def register_layout(
    name: str, *, summary: str, options: Mapping[str, str] | None = None, aliases: tuple[str, ...] = ()
) -> Callable[[LayoutFn], LayoutFn]:
    """Decorator: register ``fn(build, out, subsets, options)`` as the export layout ``name``."""

    def add(fn: LayoutFn) -> LayoutFn:
        LAYOUTS.register(name, Layout(name, fn, summary, dict(options or {})), aliases=aliases)
        return fn

    return add

"""One registry pattern for everything corruptgen looks up by name.

Corruptions, benchmark families, image sources, preprocessing presets, evaluation models, metric families and CLI
commands are each a :class:`Registry`. Entries register themselves when their module is imported (like timm's
``@register_model``); a registry that names ``discover`` packages imports every module and sub-package below them
on the first look-up, so adding an entry never means editing a list. :meth:`Registry.get` is the one door and
suggests near names on a miss.

Example:
    >>> colours = Registry("colour")
    >>> @colours.register("red", aliases=("rouge",))
    ... def red() -> str:
    ...     return "#f00"
    >>> colours.get("rouge")()
    '#f00'
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

from .errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name → entry, with aliases, near-name errors and discovery of the modules that register entries.

    Args:
        kind: what an entry is, for messages (``"benchmark family"``).
        discover: packages whose direct modules and sub-packages are imported before the first look-up (a
            sub-package's ``__init__`` imports whatever of it registers entries).
        hint: appended to a miss message when no near name exists (e.g. ``"see `corruptgen list`"``).
    """

    def __init__(self, kind: str, *, discover: tuple[str, ...] = (), hint: str = "") -> None:
        self.kind = kind
        self._discover = discover
        self._hint = hint
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._loaded = not discover

    # ------------------------------------------------------------------ registering
    @overload
    def register(self, name: str, entry: None = None, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, entry: T, *, aliases: tuple[str, ...] = ()) -> T: ...

    def register(self, name: str, entry: T | None = None, *, aliases: tuple[str, ...] = ()):
        """Add ``entry`` under ``name`` (and ``aliases``); without ``entry``, a decorator. Duplicates are errors."""

        def add(obj: T) -> T:
            for key in (name, *aliases):
                if key in self._entries or key in self._aliases:
                    raise ValueError(f"{self.kind} {key!r} registered twice")
            self._entries[name] = obj
            self._aliases.update({alias: name for alias in aliases})
            return obj

        return add if entry is None else add(entry)

    def setdefault(self, name: str, entry: T) -> T:
        """The entry registered as ``name`` so far, or ``entry`` registered under it (nothing is discovered: for
        entries made on demand, such as a resize preset per image size)."""
        return self._entries[name] if name in self._entries else self.register(name, entry)

    # ------------------------------------------------------------------ looking up
    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for package in self._discover:
            import_all(package)

    def canonical(self, name: str) -> str:
        """The registered name ``name`` stands for (itself or the target of an alias); unknown names fail.

        A name not registered yet first imports the module named like it (``imagenet-c`` →
        ``<package>.imagenet_c``), then every module: a look-up loads only what it needs (registration refuses
        duplicates, so an entry found early is the entry a full load would find)."""
        found = self._find(name)
        if found is None:
            self._import_named(name)
            found = self._find(name)
        if found is None:
            self._ensure_loaded()
            found = self._find(name)
        if found is None:
            raise UnknownNameError(self.miss_message(name))
        return found

    def _find(self, name: str) -> str | None:
        return name if name in self._entries else self._aliases.get(name)

    def _import_named(self, name: str) -> None:
        if self._loaded:
            return
        stem = name.split("/")[0].replace("-", "_")
        if not stem.isidentifier() or stem.startswith("_"):
            return
        for package in self._discover:
            try:
                spec = importlib.util.find_spec(f"{package}.{stem}")
            except ModuleNotFoundError:  # the package itself is missing: the full load reports it
                continue
            if spec is not None:
                importlib.import_module(spec.name)

    def get(self, name: str) -> T:
        """The entry registered as ``name`` (or an alias of it)."""
        return self._entries[self.canonical(name)]

    def names(self) -> list[str]:
        """Registered names (aliases excluded), in registration order."""
        self._ensure_loaded()
        return list(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        self._ensure_loaded()
        return iter(list(self._entries.items()))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.canonical(name)
        except UnknownNameError:
            return False
        return True

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._entries)

    def miss_message(self, name: str) -> str:
        """``unknown <kind> 'name'`` and up to three near registered names (an alias near ``name`` suggests the name
        it stands for; case is ignored: ``SYN2NAT`` suggests ``syn2nat``)."""
        spelled = {alias.lower(): target for alias, target in self._aliases.items()}
        spelled |= {entry.lower(): entry for entry in self._entries}
        close = difflib.get_close_matches(name.lower(), list(spelled), n=6, cutoff=0.5)
        near = list(dict.fromkeys(spelled[n] for n in close))[:3]
        if near:
            hint = f"; did you mean {', '.join(near)}?"
        else:
            hint = f"; {self._hint}" if self._hint else f"; known: {', '.join(sorted(self._entries))}"
        return f"unknown {self.kind} {name!r}{hint}"


def import_all(package: str) -> None:
    """Import ``package`` and its direct modules and sub-packages, private (``_x``) ones excepted."""
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(getattr(pkg, "__path__", []), prefix=f"{package}."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(info.name)

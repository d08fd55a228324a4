"""Benchmark families as thin declarative descriptions over the one render engine."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import CorruptgenError, UnknownNameError
from ..plan import Plan, SourceSpec, Subset
from ..preprocess import get_preprocess

CLEAN = Subset(name="clean", corruption=None)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark family: its subsets, defaults and citation.

    Attributes:
        name: CLI name (``syn2nat``).
        title: human title.
        cite: the paper it reproduces.
        subsets: every subset it can render, by name.
        default_subsets: what ``build`` renders without ``--subsets``.
        preprocess: default preprocessing preset.
    """

    name: str
    title: str
    cite: str
    subsets: dict[str, Subset]
    default_subsets: tuple[str, ...]
    preprocess: str = "syn2nat"

    def select(self, names: str | Sequence[str] | None) -> tuple[Subset, ...]:
        """Resolve ``None`` (defaults), ``"all"`` or a list / comma string of names; unknown names fail clearly."""
        if names is None:
            wanted = list(self.default_subsets)
        elif isinstance(names, str):
            parts = [n.strip() for n in names.split(",") if n.strip()]
            wanted = list(self.subsets) if parts == ["all"] else parts
        else:
            wanted = list(names)
        if not wanted:
            raise CorruptgenError("--subsets is empty")
        bad = [n for n in wanted if n not in self.subsets]
        if bad:
            near = difflib.get_close_matches(bad[0], list(self.subsets), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(near)}?" if near else f"; see `corruptgen list {self.name}`"
            raise UnknownNameError(f"unknown subset {bad[0]!r} for {self.name}{hint}")
        return tuple(self.subsets[n] for n in dict.fromkeys(wanted))

    def plan(
        self,
        *,
        source: SourceSpec | str = "samples",
        subsets: str | Sequence[str] | None = None,
        clean: bool = True,
        preprocess: str | None = None,
        **options,
    ) -> Plan:
        """Build the :class:`Plan` for this benchmark; ``options`` are :class:`Plan` fields (seed, quality, ...)."""
        chosen = self.select(subsets)
        if clean:
            chosen = (CLEAN, *(s for s in chosen if s.name != "clean"))
        src = SourceSpec(spec=source) if isinstance(source, str) else source
        return Plan(
            benchmark=self.name,
            source=src,
            subsets=chosen,
            preprocess=get_preprocess(preprocess or self.preprocess),
            **options,
        )


_BENCHMARKS: dict[str, Callable[[], Benchmark]] = {}


def register_benchmark(name: str) -> Callable[[Callable[[], Benchmark]], Callable[[], Benchmark]]:
    """Decorator registering a zero-argument benchmark factory under ``name``."""

    def wrap(factory: Callable[[], Benchmark]) -> Callable[[], Benchmark]:
        if name in _BENCHMARKS:
            raise ValueError(f"benchmark {name} registered twice")
        _BENCHMARKS[name] = factory
        return factory

    return wrap


def list_benchmarks() -> list[str]:
    from . import syn2nat  # noqa: F401  (import registers)

    return sorted(_BENCHMARKS)


def get_benchmark(name: str) -> Benchmark:
    """The benchmark family called ``name``; unknown names fail with suggestions."""
    names = list_benchmarks()
    if name not in _BENCHMARKS:
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(names)}"
        raise UnknownNameError(f"unknown benchmark {name!r}; {hint}")
    return _BENCHMARKS[name]()

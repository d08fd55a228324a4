"""Benchmark families as thin declarative descriptions over the one render engine."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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

    def select(self, names: str | Sequence[str] | None, **family_options: Any) -> tuple[Subset, ...]:
        """Resolve ``None`` (defaults), ``"all"`` or a list / comma string of names; unknown names fail clearly.

        Families with options of their own (severities, samples per image, ...) subclass :class:`Benchmark` and
        override this method; the base class accepts none.
        """
        if family_options:
            raise CorruptgenError(
                f"{self.name} takes no option {', '.join('--' + k.replace('_', '-') for k in family_options)}"
            )
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
        size: int | None = None,
        **options: Any,
    ) -> Plan:
        """Build the :class:`Plan` for this benchmark.

        ``options`` are :class:`Plan` fields (seed, quality, ...) or the family's own options (passed to
        :meth:`select` and recorded in ``plan.extra`` so they are part of the plan's identity). ``size`` scales the
        preprocessing to a ``size`` × ``size`` crop (the resize scaled by the same factor).
        """
        plan_fields = {f.name for f in dataclasses.fields(Plan)}
        family = {k: v for k, v in options.items() if k not in plan_fields and v is not None}
        options = {k: v for k, v in options.items() if k in plan_fields}
        chosen = self.select(subsets, **family)
        if clean:
            chosen = (CLEAN, *(s for s in chosen if s.name != "clean"))
        src = SourceSpec(spec=source) if isinstance(source, str) else source
        pre = get_preprocess(preprocess or self.preprocess)
        if size is not None:
            pre = pre.scaled(size)
        return Plan(
            benchmark=self.name,
            source=src,
            subsets=chosen,
            preprocess=pre,
            extra=tuple(sorted((k, _freeze(v)) for k, v in family.items())),
            **options,
        )


def _freeze(value: Any) -> Any:
    """Make family options hashable and JSON-friendly (lists -> tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


_BENCHMARKS: dict[str, Callable[[], Benchmark]] = {}


def register_benchmark(name: str) -> Callable[[Callable[[], Benchmark]], Callable[[], Benchmark]]:
    """Decorator registering a zero-argument benchmark factory under ``name``."""

    def wrap(factory: Callable[[], Benchmark]) -> Callable[[], Benchmark]:
        if name in _BENCHMARKS:
            raise ValueError(f"benchmark {name} registered twice")
        _BENCHMARKS[name] = factory
        return factory

    return wrap


#: Modules of ``corruptgen.benchmarks`` whose import registers a family (a module not present yet is skipped).
BENCHMARK_MODULES = ("syn2nat", "imagenet_c", "imagenet_p", "vcr", "opticsbench")


def list_benchmarks() -> list[str]:
    from ..corruptions.registry import _import_present

    _import_present(__package__, BENCHMARK_MODULES)
    return sorted(_BENCHMARKS)


def get_benchmark(name: str) -> Benchmark:
    """The benchmark family called ``name``; unknown names fail with suggestions."""
    names = list_benchmarks()
    if name not in _BENCHMARKS:
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(names)}"
        raise UnknownNameError(f"unknown benchmark {name!r}; {hint}")
    return _BENCHMARKS[name]()

"""Benchmark families as thin declarative descriptions over the one render engine."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CorruptgenError, UnknownNameError
from ..registry import Registry
from .plan import Plan, SourceSpec, Subset
from .preprocess import Preprocess, get_preprocess

if TYPE_CHECKING:
    from ..io.sources import Source

CLEAN = Subset(name="clean", corruption=None)


@dataclass(frozen=True)
class Option:
    """One of a family's own build options; the CLI turns it into ``--<name>`` (``_`` written as ``-``).

    Attributes:
        name: the Python keyword (``per_image``), passed to :meth:`Benchmark.plan`.
        help: one line for ``corruptgen build <family> --help``.
        kind: ``str``, ``int`` or ``flag`` (a switch).
    """

    name: str
    help: str
    kind: str = "str"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


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
        category_names: category id -> name, for listings and reports.
        options: the family's own build options (see :class:`Option`).
        metrics: the metric family ``corruptgen eval`` computes for its builds (a name registered in
            :data:`corruptgen.eval.metrics.METRICS`: ``imagenet_c``, ``imagenet_p``, ``syn2nat``, ``vcr``, ``optics``
            or ``generic`` for accuracy-only metrics).
        image_format: the shards' image format when ``--format`` is not given (``png`` where the released set is
            lossless, as CIFAR-10-C's arrays).
        image_formats: the ``--format`` values the family writes (``npy``, float32 arrays, only where corruptions
            make float images: the adversarial family).
    """

    name: str
    title: str
    cite: str
    subsets: dict[str, Subset]
    default_subsets: tuple[str, ...]
    preprocess: str = "syn2nat"
    category_names: Mapping[int, str] = field(default_factory=dict)
    options: tuple[Option, ...] = ()
    metrics: str = "generic"
    image_format: str = "jpg"
    image_formats: tuple[str, ...] = ("jpg", "png", "webp")

    def select(self, names: str | Sequence[str] | None, **family_options: Any) -> tuple[Subset, ...]:
        """Resolve ``None`` (defaults), ``"all"`` or a list / comma string of names; unknown names fail clearly.

        Families with options of their own (severities, samples per image, ...) subclass :class:`Benchmark` and
        override this method; the base class accepts none.
        """
        if family_options:
            raise CorruptgenError(
                f"{self.name} takes no option {', '.join('--' + k.replace('_', '-') for k in family_options)}"
            )
        grid = Grid(tuple(n for n in self.subsets if n != "clean"), ordered=True)
        wanted = grid.resolve(names, None, self.default_subsets, self.name)
        return tuple(self.subsets[n] for n in wanted)

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Canonical family options (part of the plan id): unset ones dropped; subclasses normalise values."""
        return {k: v for k, v in options.items() if v is not None and v is not False}

    def check_source(self, plan: Plan, source: Source) -> None:
        """Refuse, in one line, a source ``plan`` cannot be rendered from faithfully (the adversarial family: labels
        its surrogate does not share); called once on the opened source, before anything is rendered. The default
        takes any source."""

    def clean_subset(self, size: int | None) -> Subset:
        """The clean reference subset (same preprocessing, no corruption)."""
        return CLEAN

    def preprocessing(self, name: str | None, size: int | None) -> Preprocess:
        """The preprocessing preset (the family's default unless named), scaled to ``size`` when given."""
        pre = get_preprocess(name or self.preprocess)
        return pre if size is None else pre.scaled(size)

    def sized(self, subsets: tuple[Subset, ...], size: int | None) -> tuple[Subset, ...]:
        """Adapt the chosen subsets to ``--size`` (nothing to do by default)."""
        return subsets

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

        ``options`` are :class:`Plan` fields (seed, quality, ...) or the family's own options (normalised by
        :meth:`family_options`, passed to :meth:`select` and recorded in ``plan.family_options`` so they are part of
        the plan's identity). ``size`` scales the preprocessing to a ``size`` × ``size`` crop.
        """
        plan_fields = {f.name for f in dataclasses.fields(Plan)} - {"family_options"}
        own = {k: v for k, v in options.items() if k not in plan_fields}
        declared = {o.name for o in self.options}
        unknown = [k for k, v in own.items() if k not in declared and v is not None and v is not False]
        if unknown:
            flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
            has = f" (it has {', '.join(o.flag for o in self.options)})" if self.options else ""
            raise CorruptgenError(f"{self.name} takes no option {flags}{has}")
        family = self.family_options(own)
        fields = {k: v for k, v in options.items() if k in plan_fields}
        if fields.get("image_format") is None:
            fields["image_format"] = self.image_format
        if fields["image_format"] not in self.image_formats:
            raise CorruptgenError(f"{self.name} writes --format {', '.join(self.image_formats)}, not "
                                  f"{fields['image_format']!r}")  # fmt: skip
        chosen = self.select(subsets, **family)
        if clean:
            chosen = (self.clean_subset(size), *(s for s in chosen if s.name != "clean"))
        src = SourceSpec(spec=source) if isinstance(source, str) else source
        chosen = self.sized(chosen, size)
        check_subsets(chosen)
        return Plan(
            benchmark=self.name,
            source=src,
            subsets=chosen,
            preprocess=self.preprocessing(preprocess, size),
            family_options=tuple(sorted((k, _freeze(v)) for k, v in family.items())),
            **fields,
        )


@dataclass(frozen=True)
class Grid:
    """The subsets of a family as a grid: corruption × level (severity or difficulty), one subset per cell.

    ``--subsets`` tokens resolve the same way in every family: ``all`` (every corruption), ``clean``, a corruption
    name (each chosen level) or a cell's subset name (its level must be among the chosen ones when levels were chosen).
    Levels come from the family's flag (``--severities``, ``--difficulty``) or, without it, ``default_levels``.

    Attributes:
        corruptions: corruption names in benchmark order.
        levels: every valid level (``(None,)`` for a family without levels).
        default_levels: the levels a corruption name expands to when none were chosen.
        flag: the level flag, for messages (``--severities``).
        level_name: what a level is called, for messages (``severity``).
        suffix: subset name of cell (c, level): ``c + suffix + level``; ``bare_level`` is written as plain ``c``.
        ordered: keep the order in which ``--subsets`` names them (else grid order).
    """

    corruptions: tuple[str, ...]
    levels: tuple[int | None, ...] = (None,)
    default_levels: tuple[int | None, ...] | None = None
    flag: str = "--severities"
    level_name: str = "severity"
    suffix: str = "_s"
    bare_level: int | None = None
    ordered: bool = False

    def name(self, corruption: str, level: int | None) -> str:
        return corruption if level is None or level == self.bare_level else f"{corruption}{self.suffix}{level}"

    def cell(self, token: str) -> tuple[str, int | None] | None:
        """The cell a subset name denotes (``frost_s2`` → ``("frost", 2)``), or ``None``."""
        if token in self.corruptions and (self.bare_level is not None or self.levels == (None,)):
            return token, self.bare_level
        stem, sep, level = token.rpartition(self.suffix)
        if sep and stem in self.corruptions and level.isdigit():
            return stem, int(level)
        return None

    def resolve(self, names: str | Sequence[str] | None, chosen: Sequence[int] | None, default: Sequence[str],
                benchmark: str) -> list[str]:  # fmt: skip
        """Subset names in grid order (``clean`` first) for ``--subsets`` ``names`` and the chosen levels (``None``:
        none chosen). Without ``names``, the family's ``default`` tokens are used and cells of other levels dropped."""
        levels = tuple(chosen) if chosen is not None else (self.default_levels or self.levels)
        explicit = names is not None
        tokens = split_names(names) if explicit else list(default)
        if not tokens:
            raise CorruptgenError("--subsets is empty")
        cells: dict[tuple[str, int | None], None] = {}  # insertion-ordered set
        clean = False
        for token in tokens:
            cell = self.cell(token)
            if token == "all":
                cells.update(dict.fromkeys((c, lv) for c in self.corruptions for lv in levels))
            elif token == "clean":
                clean = True
            elif token in self.corruptions:
                cells.update(dict.fromkeys((token, lv) for lv in levels))
            elif cell is not None and cell[1] in self.levels:
                if cell[1] in levels or (explicit and chosen is None):
                    cells[cell] = None
                elif explicit:
                    shown = ",".join(map(str, levels))
                    raise CorruptgenError(
                        f"subset {token!r} has {self.level_name} {cell[1]}, not in {self.flag} {shown}"
                    )
            elif cell is not None:
                valid = [lv for lv in self.levels if lv is not None]
                raise CorruptgenError(f"{self.level_name} of {token!r} must be in {min(valid)}..{max(valid)}")
            else:
                raise unknown_subset(token, [*self.corruptions, *self.names(), "all"], benchmark)
        if self.ordered:
            names = [self.name(c, lv) for c, lv in cells]
        else:
            names = [self.name(c, lv) for c in self.corruptions for lv in self.levels if (c, lv) in cells]
        return (["clean"] if clean else []) + names

    def names(self) -> list[str]:
        """Every cell's subset name, in grid order."""
        return [self.name(c, lv) for c in self.corruptions for lv in self.levels]


def check_subsets(subsets: Sequence[Subset]) -> None:
    """Validate every subset's fixed options against its corruption (before anything renders)."""
    from ..corruptions.registry import get

    for subset in subsets:
        if subset.corruption is not None:
            try:
                get(subset.corruption).check_options(dict(subset.options))
            except CorruptgenError as e:
                raise CorruptgenError(f"subset {subset.name!r}: {e}") from None


def split_names(names: str | Sequence[str]) -> list[str]:
    """``"a, b"`` or ``["a", "b"]`` → ``["a", "b"]`` (blanks dropped)."""
    parts = names.split(",") if isinstance(names, str) else list(names)
    return [str(n).strip() for n in parts if str(n).strip()]


def unknown_subset(name: str, candidates: Sequence[str], benchmark: str) -> UnknownNameError:
    """The error for an unknown subset name, with near names."""
    near = difflib.get_close_matches(name.lower(), list(dict.fromkeys(candidates)), n=3, cutoff=0.5)  # names: a-z
    hint = f"; did you mean {', '.join(near)}?" if near else f"; see `corruptgen list {benchmark}`"
    return UnknownNameError(f"unknown subset {name!r} for {benchmark}{hint}")


_LEVELS_RE = re.compile(r"(\d+)(?:\.\.(\d+))?")


def parse_levels(value: Any, allowed: Sequence[int], flag: str) -> tuple[int, ...]:
    """``"1,3,5"``, ``"2..4"``, an int or a list of ints → sorted unique levels; anything else fails in one line."""
    bad = CorruptgenError(f"{flag} must be integers in {min(allowed)}..{max(allowed)} "
                          f"(e.g. 1,3 or {min(allowed)}..{max(allowed)}), got {value!r}")  # fmt: skip
    if isinstance(value, int) and not isinstance(value, bool):
        tokens = [str(value)]
    elif isinstance(value, str):
        tokens = [t.strip() for t in value.split(",")]
    elif isinstance(value, (list, tuple)) and not any(isinstance(v, bool) for v in value):
        tokens = [str(v).strip() for v in value]
    else:
        raise bad
    levels: set[int] = set()
    for token in tokens:
        match = _LEVELS_RE.fullmatch(token)
        if not match:
            raise bad
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if first > last:
            raise bad
        levels.update(range(first, last + 1))
    if not levels or not levels <= set(allowed):
        raise bad
    return tuple(sorted(levels))


def _freeze(value: Any) -> Any:
    """Make family options hashable and JSON-friendly (lists -> tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


#: Every benchmark family: canonical CLI name (``imagenet-c``) -> zero-argument factory; the Python spelling
#: (``imagenet_c``) is an alias. Families register themselves; every folder of :mod:`corruptgen.families` is imported on
#: the first look-up.
FAMILIES: Registry[Callable[[], Benchmark]] = Registry(
    "benchmark", discover=("corruptgen.families",), hint="see `corruptgen list`"
)


def register_benchmark(name: str) -> Callable[[Callable[[], Benchmark]], Callable[[], Benchmark]]:
    """Decorator registering a zero-argument benchmark factory under ``name`` (``a-b`` also answers to ``a_b``)."""
    aliases = (name.replace("-", "_"),) if "-" in name else ()
    return FAMILIES.register(name, aliases=aliases)


def list_benchmarks() -> list[str]:
    """Canonical names of every benchmark family, sorted."""
    return sorted(FAMILIES.names())


def get_benchmark(name: str) -> Benchmark:
    """The benchmark family called ``name``; unknown names fail with suggestions."""
    return FAMILIES.get(name)()


def find_benchmark(name: str | None) -> Benchmark | None:
    """The benchmark family called ``name``, or ``None`` for no name or one this install does not know (a build
    read by a newer or older corruptgen)."""
    try:
        return get_benchmark(name) if name else None
    except (CorruptgenError, KeyError, ValueError):
        return None

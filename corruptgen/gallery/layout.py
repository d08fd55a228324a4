"""The gallery's grid: one row per corruption, one column per level of it, decided from the subset records and
each subset's first sample json, so a family the gallery has never heard of still gets a sensible grid.

The column rule, per row (the subsets of one corruption), first match wins:

1. its samples store a perceived change Δv (VCR): one column per tenth of [0, 1] (the row's histogram shows the
   40 bins of VCR's coverage);
2. a subset has a severity (ImageNet-C, OpticsBench, ImageNet-P's difficulty): one column per severity;
3. several subsets (an attack at several ε, say): one column per value of the options that differ between them;
4. one subset whose samples draw their own ``severity`` (Laugros's thesis): one column, "drawn severity";
5. one subset with a category (Syn2Nat): one column per category;
6. otherwise one column, "samples".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..quality.coverage import stored_delta_v

CLEAN = "clean"
DV_COLUMNS = 10


@dataclass(frozen=True)
class Column:
    """A column of the grid: ``id`` is stable (``severity-3``, ``dv-4``, ``category-2``), ``label`` is shown."""

    id: str
    label: str
    order: tuple


CLEAN_COLUMN = Column(CLEAN, "clean", (0,))


@dataclass
class SubsetInfo:
    """What the layout knows of a subset: its manifest record (or its first sample's json) and that json."""

    name: str
    corruption: str | None
    severity: Any
    category: Any
    options: dict[str, Any]
    first: dict[str, Any]


@dataclass
class Row:
    """One corruption: its subsets in plan order, how its columns are chosen and each subset's column."""

    name: str
    subsets: list[str]
    kind: str
    column_of: dict[str, Column] = field(default_factory=dict)

    @property
    def binned(self) -> bool:
        return self.kind == "delta_v"


def short_name(corruption: str) -> str:
    """``imagenet_c/frost`` -> ``frost``."""
    return corruption.rsplit("/", 1)[-1]


def subset_info(name: str, record: Mapping[str, Any], planned: Mapping[str, Any], first: dict[str, Any]) -> SubsetInfo:
    """A subset's facts: the manifest's record and plan entry first, the sample json where the build has none."""

    def pick(key: str) -> Any:
        for where in (record, planned):
            if where.get(key) is not None:
                return where[key]
        return first.get(key)

    corruption = pick("corruption")
    options = planned.get("options") if isinstance(planned.get("options"), dict) else {}
    return SubsetInfo(
        name, None if corruption is None else str(corruption), pick("severity"), pick("category"), dict(options), first
    )


def plan_rows(infos: Sequence[SubsetInfo], category_names: Mapping[int, str] | None = None) -> list[Row]:
    """The rows of a build (its ``clean`` subset is the clean column, not a row), in plan order."""
    groups: dict[str, list[SubsetInfo]] = {}
    for info in infos:
        if info.name == CLEAN:
            continue
        name = short_name(info.corruption or str(info.first.get("corruption") or "") or info.name)
        groups.setdefault(name, []).append(info)
    return [_row(name, members, category_names or {}) for name, members in groups.items()]


def _row(name: str, members: list[SubsetInfo], category_names: Mapping[int, str]) -> Row:
    subsets = [m.name for m in members]
    if any(stored_delta_v(m.first) is not None for m in members):
        return Row(name, subsets, "delta_v")
    if any(m.severity is not None for m in members):
        return Row(name, subsets, "severity", {m.name: severity_column(m.severity) for m in members})
    if len(members) > 1:
        return Row(name, subsets, "options", _option_columns(members))
    only = members[0]
    params = only.first.get("params") if isinstance(only.first.get("params"), dict) else {}
    if _number(params.get("severity")):
        return Row(name, subsets, "drawn", {only.name: Column("drawn", "drawn severity", (3,))})
    if only.category is not None:
        label = f"{only.category}: {category_names[only.category]}" if only.category in category_names else None
        column = Column(
            f"category-{only.category}", label or f"category {only.category}", (4, _sortable(only.category))
        )
        return Row(name, subsets, "category", {only.name: column})
    return Row(name, subsets, "samples", {only.name: Column("samples", "samples", (6,))})


def severity_column(severity: Any) -> Column:
    return Column(f"severity-{severity}", f"severity {severity}", (1, _sortable(severity)))


def dv_column(k: int) -> Column:
    """Column ``k`` of a Δv row: Δv in [k/10, (k+1)/10) (Δv = 1 in the last)."""
    lo, hi = k / DV_COLUMNS, (k + 1) / DV_COLUMNS
    return Column(f"dv-{k}", f"Δv {lo:.1f}–{hi:.1f}", (5, k))


def dv_index(delta_v: float) -> int:
    return min(max(int(delta_v * DV_COLUMNS), 0), DV_COLUMNS - 1)


def _option_columns(members: list[SubsetInfo]) -> dict[str, Column]:
    keys = sorted({k for m in members for k in m.options})
    differ = [k for k in keys if len({repr(m.options.get(k)) for m in members}) > 1]
    out = {}
    for i, m in enumerate(members):
        label = ", ".join(f"{k}={m.options.get(k)}" for k in differ) or m.name
        out[m.name] = Column(f"subset-{m.name}" if not differ else f"options-{label}", label, (2, i, label))
    return out


def table_columns(rows: Sequence[Row], clean: bool) -> list[Column]:
    """Every column any row uses, in a fixed order: clean, severities, options, drawn, categories, Δv, samples."""
    found: dict[str, Column] = {}
    for row in rows:
        used = [dv_column(k) for k in range(DV_COLUMNS)] if row.binned else row.column_of.values()
        for column in used:
            found.setdefault(column.id, column)
    columns = sorted(found.values(), key=lambda c: c.order)
    return ([CLEAN_COLUMN] if clean else []) + columns


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sortable(value: Any) -> tuple:
    return (0, float(value), "") if _number(value) else (1, 0.0, str(value))

"""Selecting corruption benchmarks from corruption categories (Laugros et al., BMVC 2021, §5).

* :func:`generate_benchmark` is Algorithm 1: pick ``n`` categories, then ``k`` distinct corruptions from each.
* :func:`generate_benchmarks` repeats it until ``count`` distinct benchmarks (``generate_n_k_bench.py``).
* :func:`substitute` / :func:`substitution_study` unbalance benchmarks with the §5.2 substitution and group them by
  ``std`` (``get_non_zero_std_bench.py``).

The reference repository calls ``tools.get_balanced_benchmark``, ``tools.substitute_cc`` and
``tools.get_representation_bench`` but does not ship them, so this module follows the paper text.

A category mapping is ``{category id: [corruption names]}``. A category named ``"unassigned"`` (any case) or ``None``
holds corruptions with no known category: it is never selected and never counts as a represented category.
Category ids and names are sorted before any random draw, so results depend only on the seed and on the content of
the mapping, not on its order.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from ...errors import CorruptgenError

__all__ = [
    "UNASSIGNED",
    "Categories",
    "balance_std",
    "category_counts",
    "count_possible",
    "generate_benchmark",
    "generate_benchmarks",
    "load_categories",
    "substitute",
    "substitution_study",
]

Categories = Mapping[str, Sequence[str]]
Benchmark = tuple[str, ...]

UNASSIGNED = "unassigned"


# --------------------------------------------------------------------------------------------------------------------
# validation helpers


def _is_unassigned(category: object) -> bool:
    return category is None or (isinstance(category, str) and category.strip().lower() == UNASSIGNED)


def _check_int(value: object, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise CorruptgenError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise CorruptgenError(f"{what} must be >= {minimum}, got {value}")
    return int(value)


def _selectable(categories: Categories) -> dict[str, tuple[str, ...]]:
    """Validate a category mapping; return its selectable categories (sorted ids, sorted names).

    Raises:
        CorruptgenError: not a mapping, a name that is not a non-empty string, or a name listed twice.
    """
    if not isinstance(categories, Mapping):
        raise CorruptgenError(f"categories must be a mapping category -> corruption names, got {type(categories)}")
    owner: dict[str, object] = {}
    selectable: dict[str, tuple[str, ...]] = {}
    for category, names in categories.items():
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise CorruptgenError(f"category {category!r} must list corruption names, got {names!r}")
        names = list(names)
        for name in names:
            if not isinstance(name, str) or not name:
                raise CorruptgenError(
                    f"category {category!r}: corruption names must be non-empty strings, got {name!r}"
                )
            if name in owner:
                where = "twice" if owner[name] == category else f"in categories {owner[name]!r} and {category!r}"
                raise CorruptgenError(f"corruption {name!r} is listed {where}; a corruption has one category")
            owner[name] = category
        if not _is_unassigned(category):
            if str(category) in selectable:
                raise CorruptgenError(f"category id {str(category)!r} is given twice (as {category!r})")
            selectable[str(category)] = tuple(sorted(names))
    return {category: selectable[category] for category in sorted(selectable)}


def _owners(cats: Mapping[str, Sequence[str]]) -> dict[str, str]:
    return {name: category for category, names in cats.items() for name in names}


def _bench_categories(bench: Iterable[str], owner: Mapping[str, str]) -> Benchmark:
    """Validate a benchmark against the selectable categories; return it as a sorted tuple."""
    if isinstance(bench, str):
        raise CorruptgenError(f"a benchmark is a sequence of corruption names, got the string {bench!r}")
    names = list(bench)
    if not names:
        raise CorruptgenError("a benchmark must contain at least one corruption")
    if len(set(names)) != len(names):
        dupes = sorted({name for name in names if names.count(name) > 1})
        raise CorruptgenError(f"benchmark lists {', '.join(map(repr, dupes))} more than once")
    unknown = [name for name in names if name not in owner]
    if unknown:
        raise CorruptgenError(
            f"corruption(s) {', '.join(map(repr, unknown))} have no category (unknown or 'unassigned')"
        )
    return tuple(sorted(names))


def _counts(bench: Benchmark, owner: Mapping[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in bench:
        counts[owner[name]] = counts.get(owner[name], 0) + 1
    return counts


def _eligible(cats: Mapping[str, Sequence[str]], n: int, k: int) -> list[str]:
    """Category ids with at least ``k`` members; raise when fewer than ``n``."""
    eligible = [category for category, names in cats.items() if len(names) >= k]
    if n > len(eligible):
        sizes = ", ".join(f"{category}: {len(names)}" for category, names in cats.items()) or "none"
        raise CorruptgenError(
            f"n={n} categories requested but only {len(eligible)} categories have at least k={k} corruptions "
            f"(category sizes: {sizes})"
        )
    return eligible


# --------------------------------------------------------------------------------------------------------------------
# Algorithm 1


def generate_benchmark(categories: Categories, n: int, k: int, rng: np.random.Generator) -> Benchmark:
    """Run Algorithm 1 once (Laugros et al., BMVC 2021, Algorithm 1).

    Randomly selects ``n`` distinct categories among those with at least ``k`` corruptions, then ``k`` distinct
    corruptions from each. The reference repo lacks ``tools.get_balanced_benchmark``; this follows the paper text.

    Args:
        categories: category id -> corruption names; an ``"unassigned"``/``None`` category is ignored.
        n: number of represented categories.
        k: number of representatives per represented category.
        rng: source of randomness.

    Returns:
        The benchmark as a sorted tuple of ``n * k`` corruption names.

    Raises:
        CorruptgenError: ``n`` or ``k`` < 1, or fewer than ``n`` categories with ``k`` members.
    """
    n, k = _check_int(n, "n", 1), _check_int(k, "k", 1)
    cats = _selectable(categories)
    return _draw(cats, _eligible(cats, n, k), n, k, rng)


def _draw(
    cats: Mapping[str, Sequence[str]], eligible: Sequence[str], n: int, k: int, rng: np.random.Generator
) -> Benchmark:
    chosen = rng.choice(len(eligible), size=n, replace=False)
    bench: list[str] = []
    for index in chosen:
        names = cats[eligible[int(index)]]
        bench.extend(names[int(j)] for j in rng.choice(len(names), size=k, replace=False))
    return tuple(sorted(bench))


def count_possible(categories: Categories, n: int, k: int) -> int:
    """Number of distinct benchmarks Algorithm 1 can return.

    This is the sum, over the ``n``-subsets of categories with at least ``k`` members, of ``prod C(|cat|, k)``
    (an elementary symmetric polynomial, computed exactly). It is 0 when fewer than ``n`` categories qualify.

    Raises:
        CorruptgenError: ``n`` or ``k`` < 1, or a malformed category mapping.
    """
    n, k = _check_int(n, "n", 1), _check_int(k, "k", 1)
    weights = [math.comb(len(names), k) for names in _selectable(categories).values()]
    # e[j] = sum over j-subsets of the product of weights (0 for categories with fewer than k members).
    e = [1] + [0] * n
    for weight in weights:
        for j in range(n, 0, -1):
            e[j] += e[j - 1] * weight
    return e[n]


def _enumerate(cats: Mapping[str, Sequence[str]], n: int, k: int) -> Iterator[Benchmark]:
    eligible = [category for category, names in cats.items() if len(names) >= k]
    for chosen in itertools.combinations(eligible, n):
        for parts in itertools.product(*(itertools.combinations(cats[category], k) for category in chosen)):
            yield tuple(sorted(itertools.chain.from_iterable(parts)))


def generate_benchmarks(categories: Categories, n: int, k: int, count: int, seed: int = 0) -> list[Benchmark]:
    """Repeat Algorithm 1 until ``count`` distinct benchmarks (reference: ``generate_n_k_bench.py``).

    Laugros et al., BMVC 2021, Algorithm 1 / §5.1 (1000 distinct benchmarks per ``(n, k)``). When ``count`` is at
    least :func:`count_possible`, sampling cannot (or would take long to) finish, so every possible benchmark is
    returned instead, in sorted order; the caller can compare ``len(result)`` with ``count`` and report it.

    Args:
        categories: category id -> corruption names; an ``"unassigned"``/``None`` category is ignored.
        n: number of represented categories.
        k: number of representatives per represented category.
        count: number of distinct benchmarks wanted.
        seed: seed of the numpy Generator.

    Returns:
        Distinct sorted benchmarks, in order of first appearance.

    Raises:
        CorruptgenError: ``n``, ``k`` or ``count`` < 1, or fewer than ``n`` categories with ``k`` members.
    """
    n, k, count = _check_int(n, "n", 1), _check_int(k, "k", 1), _check_int(count, "count", 1)
    cats = _selectable(categories)
    eligible = _eligible(cats, n, k)
    if count >= count_possible(cats, n, k):
        return sorted(_enumerate(cats, n, k))
    rng = np.random.default_rng(seed)
    seen: dict[Benchmark, None] = {}
    while len(seen) < count:
        seen.setdefault(_draw(cats, eligible, n, k, rng))
    return list(seen)


# --------------------------------------------------------------------------------------------------------------------
# balance and substitution (§5.2)


def category_counts(bench: Sequence[str], categories: Categories) -> dict[str, int]:
    """Number of representatives of each represented category (count > 0), in sorted category order.

    Raises:
        CorruptgenError: empty benchmark, duplicated name, or a name with no category.
    """
    cats = _selectable(categories)
    owner = _owners(cats)
    counts = _counts(_bench_categories(bench, owner), owner)
    return {category: counts[category] for category in cats if category in counts}


def balance_std(bench: Sequence[str], categories: Categories) -> float:
    """The paper's ``std``: population standard deviation of the per-category counts of represented categories.

    Laugros et al., BMVC 2021, §5.2. It is 0 for any Algorithm 1 output.
    """
    return float(np.std(list(category_counts(bench, categories).values())))


def _spread(counts: Iterable[int]) -> int:
    """``m**2 * variance`` of the counts, as an exact integer (``m`` = number of counts)."""
    values = list(counts)
    return len(values) * sum(c * c for c in values) - sum(values) ** 2


def _substitution_pairs(
    bench: Benchmark, cats: Mapping[str, Sequence[str]], owner: Mapping[str, str]
) -> list[tuple[str, str]]:
    counts = _counts(bench, owner)
    present = set(bench)
    before = _spread(counts.values())
    pairs: list[tuple[str, str]] = []
    for c1 in bench:
        cat1 = owner[c1]
        if counts[cat1] < 2:  # removing c1 would drop its category: condition (1)
            continue
        for cat2 in cats:
            if cat2 == cat1 or cat2 not in counts:  # same category keeps std; a new category breaks (1)
                continue
            after = dict(counts)
            after[cat1] -= 1
            after[cat2] += 1
            if _spread(after.values()) <= before:  # condition (2): std strictly increases
                continue
            pairs.extend((c1, c2) for c2 in cats[cat2] if c2 not in present)  # condition (3)
    return pairs


def substitute(bench: Sequence[str], categories: Categories, rng: np.random.Generator) -> Benchmark | None:
    """Apply one substitution (Laugros et al., BMVC 2021, §5.2).

    Removes a corruption ``c1`` from ``bench`` and adds a candidate ``c2`` such that (1) the set of represented
    categories does not change, (2) ``std`` strictly increases, (3) ``c2`` is not already in ``bench``. The pair is
    drawn uniformly among all valid ``(c1, c2)`` pairs. The reference repo lacks ``tools.substitute_cc``; this
    follows the paper text. Condition (2) is checked on exact integers (the number of represented categories and
    the size are fixed, so ``std`` grows iff the sum of squared counts grows), which avoids float ties.

    Returns:
        The new benchmark as a sorted tuple, or ``None`` when no valid substitution exists.

    Raises:
        CorruptgenError: empty benchmark, duplicated name, or a name with no category.
    """
    cats = _selectable(categories)
    owner = _owners(cats)
    current = _bench_categories(bench, owner)
    pairs = _substitution_pairs(current, cats, owner)
    if not pairs:
        return None
    c1, c2 = pairs[int(rng.integers(len(pairs)))]
    return tuple(sorted([name for name in current if name != c1] + [c2]))


def _std_key(counts: Iterable[int]) -> float:
    return float(np.round(np.std(list(counts)), 1))


def substitution_study(
    benches: Iterable[Sequence[str]],
    categories: Categories,
    seed: int = 0,
    max_substitutions: int | None = None,
    *,
    repeats: int = 1,
    include_initial: bool = True,
) -> dict[float, list[Benchmark]]:
    """Unbalance benchmarks by repeated substitutions; group them by ``std`` (reference: ``get_non_zero_std_bench.py``).

    Laugros et al., BMVC 2021, §5.2: each benchmark is substituted repeatedly (:func:`substitute`) until no valid
    substitution remains or ``max_substitutions`` were made (the paper substitutes "from 1 to 5 corruptions"), and
    every distinct intermediate benchmark is kept. The reference repo lacks ``tools.substitute_cc``; this follows the
    paper text. The reference runs the list 10 times (``repeats=10``) and keeps the starting benchmarks too; here
    they are kept by default (``include_initial=True``, usually the ``0.0`` group); with ``include_initial=False``
    only benchmarks produced by at least one substitution are kept.

    Args:
        benches: starting benchmarks (usually Algorithm 1 output).
        categories: category id -> corruption names; an ``"unassigned"``/``None`` category is ignored.
        seed: seed of the numpy Generator.
        max_substitutions: most substitutions per chain; ``None`` for no limit (chains always end: std grows).
        repeats: number of passes over ``benches``, each with fresh random chains.
        include_initial: keep the starting benchmarks.

    Returns:
        ``round(std, 1)`` -> distinct sorted benchmarks in order of first appearance; keys ascending.

    Raises:
        CorruptgenError: bad ``max_substitutions``/``repeats`` or an invalid benchmark.
    """
    if max_substitutions is not None:
        max_substitutions = _check_int(max_substitutions, "max_substitutions", 0)
    repeats = _check_int(repeats, "repeats", 1)
    cats = _selectable(categories)
    owner = _owners(cats)
    starts = [_bench_categories(bench, owner) for bench in benches]
    rng = np.random.default_rng(seed)
    groups: dict[float, list[Benchmark]] = {}
    seen: set[Benchmark] = set()

    def keep(bench: Benchmark) -> None:
        if bench not in seen:
            seen.add(bench)
            groups.setdefault(_std_key(_counts(bench, owner).values()), []).append(bench)

    for _ in range(repeats):
        for current in starts:
            if include_initial:
                keep(current)
            steps = 0
            while max_substitutions is None or steps < max_substitutions:
                pairs = _substitution_pairs(current, cats, owner)
                if not pairs:
                    break
                c1, c2 = pairs[int(rng.integers(len(pairs)))]
                current = tuple(sorted([name for name in current if name != c1] + [c2]))
                keep(current)
                steps += 1
    return {key: groups[key] for key in sorted(groups)}


# --------------------------------------------------------------------------------------------------------------------
# category files


def load_categories(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Read a user category file.

    The file is JSON, either ``{"category": ["name", ...]}`` or ``{"name": "category"}``. In the second form a
    ``null`` category means ``"unassigned"``; integer category ids are turned into strings.

    Returns:
        category id -> corruption names (file order); unassigned names are under ``"unassigned"``.

    Raises:
        CorruptgenError: unreadable file, invalid JSON, a shape other than the two above, or a name in two
        categories.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise CorruptgenError(f"category file not found: {os.fspath(path)}") from None
    except OSError as exc:
        raise CorruptgenError(f"cannot read category file {os.fspath(path)}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorruptgenError(f"category file {os.fspath(path)} is not valid JSON: {exc}") from None
    where = f"category file {os.fspath(path)}"
    if not isinstance(data, dict) or not data:
        raise CorruptgenError(
            f'{where} must be a non-empty JSON object: {{"category": ["name", ...]}} or {{"name": "category"}}'
        )
    values = list(data.values())
    result: dict[str, list[str]] = {}
    if all(isinstance(value, list) for value in values):
        for category, names in data.items():
            result.setdefault(UNASSIGNED if _is_unassigned(category) else category, []).extend(names)
    elif all(value is None or (isinstance(value, str | int) and not isinstance(value, bool)) for value in values):
        for name, category in data.items():
            key = UNASSIGNED if _is_unassigned(category) else str(category)
            result.setdefault(key, []).append(name)
    else:
        raise CorruptgenError(
            f'{where}: values must be all lists ({{"category": ["name", ...]}}) '
            f'or all category ids ({{"name": "category"}}), not a mix'
        )
    try:
        _selectable(result)
    except CorruptgenError as exc:
        raise CorruptgenError(f"{where}: {exc}") from None
    return result

"""Tests for corruptgen.families.syn2nat.selection (Laugros et al., BMVC 2021, Algorithm 1 and §5.2)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.families.syn2nat.selection import (
    balance_std,
    category_counts,
    count_possible,
    generate_benchmark,
    generate_benchmarks,
    load_categories,
    substitute,
    substitution_study,
)

SYN2NAT = {
    "1": ["solarize", "random_sun_flare", "random_shadow"],
    "2": ["affines", "perspective", "cutout"],
    "3": ["sharpen", "random_rain", "emboss"],
    "4": ["random_contrast", "random_brightness", "random_gamma"],
    "5": ["iso_noise", "downscale", "posterize"],
    "6": ["color_jitter", "channel_dropout", "to_sepia"],
}
OWNER = {name: cat for cat, names in SYN2NAT.items() for name in names}

# 10 categories of sizes 1..5 plus an unassigned bucket that must never be selected.
BIG = {str(i): [f"c{i}_{j}" for j in range(size)] for i, size in enumerate([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], start=1)}
BIG_WITH_UNASSIGNED = {**BIG, "unassigned": ["u0", "u1", "u2", "u3", "u4", "u5"]}
# small enough (14 names) for a brute force over subsets of names
SMALL = {"a": ["a0"], "b": ["b0", "b1"], "c": ["c0", "c1", "c2"], "d": ["d0", "d1", "d2", "d3"], "e": ["e0", "e1"]}
SMALL_WITH_UNASSIGNED = {**SMALL, "unassigned": ["u0", "u1"]}


def brute_force(categories: dict[str, list[str]], n: int, k: int) -> set[tuple[str, ...]]:
    """All Algorithm 1 outputs, by brute force over every subset of names."""
    names = sorted(name for cat, members in categories.items() if cat != "unassigned" for name in members)
    owner = {name: cat for cat, members in categories.items() for name in members}
    found = set()
    for subset in itertools.combinations(names, n * k):
        counts = {}
        for name in subset:
            counts[owner[name]] = counts.get(owner[name], 0) + 1
        if len(counts) == n and set(counts.values()) == {k}:
            found.add(subset)
    return found


def assert_balanced(bench: tuple[str, ...], n: int, k: int, owner=OWNER) -> None:
    assert bench == tuple(sorted(bench))
    assert len(set(bench)) == len(bench) == n * k
    counts = {}
    for name in bench:
        counts[owner[name]] = counts.get(owner[name], 0) + 1
    assert len(counts) == n
    assert set(counts.values()) == {k}


# ---------------------------------------------------------------------------------------------------- Algorithm 1


@pytest.mark.parametrize(("n", "k"), [(2, 3), (3, 2), (6, 1), (4, 3), (6, 2), (6, 3)])
def test_algorithm1_balanced_and_deterministic(n: int, k: int) -> None:
    bench = generate_benchmark(SYN2NAT, n, k, np.random.default_rng(3))
    assert_balanced(bench, n, k)
    assert balance_std(bench, SYN2NAT) == 0.0
    assert generate_benchmark(SYN2NAT, n, k, np.random.default_rng(3)) == bench


@pytest.mark.parametrize(("n", "k", "expected"), [(6, 3, 1), (6, 2, 3**6), (2, 3, 15), (3, 2, math.comb(6, 3) * 27)])
def test_count_possible_by_hand(n: int, k: int, expected: int) -> None:
    assert count_possible(SYN2NAT, n, k) == expected
    assert expected in (1, 729, 15, 540)


@pytest.mark.parametrize(("n", "k"), [(1, 1), (2, 2), (3, 1), (2, 3), (3, 2), (5, 1), (4, 2), (1, 4)])
def test_count_possible_matches_brute_force(n: int, k: int) -> None:
    expected = brute_force(SMALL_WITH_UNASSIGNED, n, k)
    assert count_possible(SMALL_WITH_UNASSIGNED, n, k) == len(expected)
    assert set(generate_benchmarks(SMALL_WITH_UNASSIGNED, n, k, len(expected) + 1)) == expected


@pytest.mark.parametrize(("n", "k"), [(1, 1), (2, 2), (4, 3), (6, 3), (3, 5), (10, 1), (11, 1)])
def test_count_possible_matches_direct_sum(n: int, k: int) -> None:
    sizes = [len(names) for names in BIG.values()]
    direct = sum(math.prod(math.comb(s, k) for s in chosen) for chosen in itertools.combinations(sizes, n))
    assert count_possible(BIG_WITH_UNASSIGNED, n, k) == direct


def test_generate_benchmarks_distinct_sorted_deterministic() -> None:
    benches = generate_benchmarks(SYN2NAT, 3, 2, 200, seed=1)
    assert len(benches) == len(set(benches)) == 200
    for bench in benches:
        assert_balanced(bench, 3, 2)
    assert generate_benchmarks(SYN2NAT, 3, 2, 200, seed=1) == benches
    assert generate_benchmarks(SYN2NAT, 3, 2, 200, seed=2) != benches
    # first-appearance order: a shorter run is a prefix of a longer one with the same seed
    assert generate_benchmarks(SYN2NAT, 3, 2, 50, seed=1) == benches[:50]


def test_more_than_possible_returns_all() -> None:
    all_15 = generate_benchmarks(SYN2NAT, 2, 3, 1000, seed=0)
    assert len(all_15) == 15
    assert set(all_15) == brute_force(SYN2NAT, 2, 3)
    assert all_15 == sorted(all_15)
    assert generate_benchmarks(SYN2NAT, 6, 3, 5) == [tuple(sorted(OWNER))]
    assert len(generate_benchmarks(SYN2NAT, 6, 2, 729)) == 729


def test_unassigned_and_none_categories_ignored() -> None:
    cats = {**SYN2NAT, "unassigned": ["blur", "rotate", "flip"], None: ["fog", "snow", "rgb_shift"]}
    assert count_possible(cats, 6, 3) == 1
    for bench in generate_benchmarks(cats, 2, 3, 15):
        assert_balanced(bench, 2, 3)
    with pytest.raises(CorruptgenError, match="no category"):
        balance_std(("blur", "solarize"), cats)


def test_larger_category_file(tmp_path) -> None:
    path = tmp_path / "cats.json"
    path.write_text(json.dumps(BIG_WITH_UNASSIGNED))
    cats = load_categories(path)
    assert cats == BIG_WITH_UNASSIGNED
    owner = {name: cat for cat, names in BIG.items() for name in names}
    # k=3: only the six categories of size >= 3 (sizes 3, 4, 5 twice each) are eligible
    assert count_possible(cats, 6, 3) == (1 * 4 * 10) ** 2
    benches = generate_benchmarks(cats, 4, 3, 100, seed=5)
    assert len(set(benches)) == 100
    for bench in benches:
        assert_balanced(bench, 4, 3, owner)
    everything = generate_benchmarks(cats, 6, 3, 10_000)
    assert len(everything) == len(set(everything)) == 1600
    for bench in everything:
        assert_balanced(bench, 6, 3, owner)
    with pytest.raises(CorruptgenError, match="only 6 categories"):
        generate_benchmarks(cats, 7, 3, 1)
    study = substitution_study(benches[:20], cats, seed=0, max_substitutions=5)
    for key, group in study.items():
        for bench in group:
            assert round(balance_std(bench, cats), 1) == key
            assert len(category_counts(bench, cats)) == 4


# ---------------------------------------------------------------------------------------------------- substitution


def test_balance_std_hand_computed() -> None:
    # counts 3,1,2,2,2,2: mean 2, variance (1 + 1) / 6 = 1/3, std = 0.5774 -> 0.6
    bench = (*SYN2NAT["1"], "affines", "sharpen", "random_rain", *SYN2NAT["4"][:2], *SYN2NAT["5"][:2])
    bench += tuple(SYN2NAT["6"][:2])
    assert category_counts(bench, SYN2NAT) == {"1": 3, "2": 1, "3": 2, "4": 2, "5": 2, "6": 2}
    assert balance_std(bench, SYN2NAT) == pytest.approx(math.sqrt(1 / 3))
    assert round(balance_std(bench, SYN2NAT), 1) == 0.6
    assert category_counts(("solarize", "cutout", "perspective"), SYN2NAT) == {"1": 1, "2": 2}
    assert balance_std(("solarize", "cutout", "perspective"), SYN2NAT) == pytest.approx(0.5)


def test_substitute_conditions() -> None:
    rng = np.random.default_rng(0)
    for bench in generate_benchmarks(SYN2NAT, 6, 2, 100, seed=0) + generate_benchmarks(SYN2NAT, 3, 2, 50, seed=0):
        current = bench
        while (new := substitute(current, SYN2NAT, rng)) is not None:
            assert new == tuple(sorted(new))
            assert len(set(new)) == len(new) == len(current)
            assert len(set(current) - set(new)) == 1
            assert set(category_counts(new, SYN2NAT)) == set(category_counts(current, SYN2NAT))
            assert balance_std(new, SYN2NAT) > balance_std(current, SYN2NAT) + 1e-9
            current = new


def test_substitute_none_when_impossible() -> None:
    rng = np.random.default_rng(0)
    assert substitute(tuple(OWNER), SYN2NAT, rng) is None  # every candidate already in the benchmark
    assert substitute(("solarize", "affines"), SYN2NAT, rng) is None  # one per category: removing drops a category
    assert substitute(("solarize",), SYN2NAT, rng) is None


def test_substitute_uniform_over_pairs() -> None:
    # counts {1: 2, 2: 2}: any c1 (4 choices) with c2 the missing name of the other category -> 4 valid pairs
    bench = ("solarize", "random_sun_flare", "affines", "perspective")
    rng = np.random.default_rng(0)
    seen = {substitute(bench, SYN2NAT, rng) for _ in range(200)}
    assert len(seen) == 4
    assert all(balance_std(new, SYN2NAT) == pytest.approx(1.0) for new in seen)


def test_substitution_study_n6_k2() -> None:
    benches = generate_benchmarks(SYN2NAT, 6, 2, 100, seed=0)
    study = substitution_study(benches, SYN2NAT, seed=0)
    assert list(study) == sorted(study)
    # Syn2Nat categories have 3 members, so counts are in 1..3 summing to 12: (2^6) 0, (3,1,2^4) 0.6,
    # (3,3,1,1,2,2) sqrt(4/6)=0.816 -> 0.8, (3^3,1^3) 1.0; every chain ends at 1.0
    assert set(study) == {0.0, 0.6, 0.8, 1.0}
    assert study[0.0] == benches
    all_benches = [bench for group in study.values() for bench in group]
    assert len(all_benches) == len(set(all_benches))
    for key, group in study.items():
        for bench in group:
            assert round(balance_std(bench, SYN2NAT), 1) == key
            assert len(category_counts(bench, SYN2NAT)) == 6
    assert substitution_study(benches, SYN2NAT, seed=0) == study
    assert substitution_study(benches, SYN2NAT, seed=1) != study


def test_substitution_study_options() -> None:
    benches = generate_benchmarks(SYN2NAT, 6, 2, 30, seed=0)
    one = substitution_study(benches, SYN2NAT, seed=0, max_substitutions=1)
    assert set(one) == {0.0, 0.6}
    assert substitution_study(benches, SYN2NAT, max_substitutions=0) == {0.0: benches}
    produced = substitution_study(benches, SYN2NAT, seed=0, max_substitutions=1, include_initial=False)
    assert set(produced) == {0.6}
    more = substitution_study(benches, SYN2NAT, seed=0, max_substitutions=1, repeats=10)
    assert len(more[0.6]) > len(one[0.6])


# ---------------------------------------------------------------------------------------------------- files, errors


def test_load_categories_formats(tmp_path) -> None:
    by_name = tmp_path / "by_name.json"
    by_name.write_text(json.dumps({"solarize": "1", "affines": 2, "cutout": "2", "blur": None}))
    assert load_categories(by_name) == {"1": ["solarize"], "2": ["affines", "cutout"], "unassigned": ["blur"]}
    by_cat = tmp_path / "by_cat.json"
    by_cat.write_text(json.dumps(SYN2NAT))
    assert load_categories(by_cat) == SYN2NAT


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"1": ["a", "b"], "2": ["b"]}', "'b' is listed in categories"),
        ('{"1": ["a", "a"]}', "listed twice"),
        ('{"1": ["a"], "b": "2"}', "not a mix"),
        ("[1, 2]", "non-empty JSON object"),
        ("{}", "non-empty JSON object"),
        ("{not json", "not valid JSON"),
        ('{"1": ["a", 3]}', "non-empty strings"),
    ],
)
def test_load_categories_errors(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CorruptgenError, match=message):
        load_categories(path)


def test_load_categories_missing(tmp_path) -> None:
    with pytest.raises(CorruptgenError, match="not found"):
        load_categories(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 7, "k": 1, "count": 1}, "only 6 categories"),
        ({"n": 2, "k": 4, "count": 1}, "only 0 categories"),
        ({"n": 0, "k": 1, "count": 1}, "n must be >= 1"),
        ({"n": 2, "k": 0, "count": 1}, "k must be >= 1"),
        ({"n": 2, "k": 1, "count": 0}, "count must be >= 1"),
        ({"n": 2.5, "k": 1, "count": 1}, "n must be an integer"),
        ({"n": True, "k": 1, "count": 1}, "n must be an integer"),
    ],
)
def test_generate_benchmarks_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(CorruptgenError, match=message):
        generate_benchmarks(SYN2NAT, **kwargs)


def test_bad_benchmarks_and_categories() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(CorruptgenError, match="more than once"):
        balance_std(("solarize", "solarize"), SYN2NAT)
    with pytest.raises(CorruptgenError, match="no category"):
        substitute(("solarize", "nope"), SYN2NAT, rng)
    with pytest.raises(CorruptgenError, match="at least one"):
        category_counts((), SYN2NAT)
    with pytest.raises(CorruptgenError, match="listed in categories"):
        count_possible({"1": ["a"], "2": ["a"]}, 1, 1)
    with pytest.raises(CorruptgenError, match="max_substitutions"):
        substitution_study([("solarize",)], SYN2NAT, max_substitutions=-1)
    with pytest.raises(CorruptgenError, match="k must be >= 1"):
        generate_benchmark(SYN2NAT, 1, 0, rng)
    with pytest.raises(CorruptgenError, match="given twice"):
        count_possible({1: ["a"], "1": ["b"]}, 1, 1)
    with pytest.raises(CorruptgenError, match="must list corruption names"):
        count_possible({"1": "solarize"}, 1, 1)
    assert count_possible(SYN2NAT, 7, 1) == 0

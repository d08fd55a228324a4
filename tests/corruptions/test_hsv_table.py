"""Exact colour tables for brightness and saturate (imagenet_c/_hsv_table.py): the kernel's bytes, built only where
they pay, in a bounded cache.

The table equals the exact kernel on random images and photos (all 2²⁴ colours: ``scripts/check_hsv_exhaustive.py``);
the registered corruptions give the same bytes before and after their table exists; the cache's rule (credit in
table builds, ski rental, at most N tables, no eviction between sets that take turns) is checked with a stand-in
build so that it costs no table.
"""

from __future__ import annotations

import numpy as np
import pytest
import skimage.data

from corruptgen.corruptions import get
from corruptgen.families.imagenet_c import _hsv, _hsv_table
from corruptgen.families.imagenet_c._hsv_table import TableCache

BRIGHTNESS_3, SATURATE_5 = (0.3, 1.0, 0.0), (0.0, 5.0, 0.1)


def _images() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    noise = [rng.integers(0, 256, size=shape, dtype=np.uint8) for shape in ((224, 224, 3), (31, 17, 3), (1, 1, 3))]
    photos = [skimage.data.astronaut()[::3, ::2], skimage.data.coffee()[50:130, 7:300]]  # odd sizes, not contiguous
    return noise + photos


@pytest.mark.parametrize("params", [BRIGHTNESS_3, SATURATE_5, (-0.25, 0.0, 0.3)])
def test_the_table_is_the_kernel_on_random_images_and_photos(params):
    table = _hsv_table.build_table(params)
    assert table.shape == (1 << 24,) and table.dtype == np.uint32 and not table.flags.writeable
    v, a, b = params
    for image in _images():
        expected = _hsv.hsv_adjust_uint8(image, value_shift=v, sat_scale=a, sat_shift=b)
        np.testing.assert_array_equal(_hsv_table.apply_table(image, table), expected)


@pytest.fixture
def cache(monkeypatch):
    """A fresh process-wide cache of 2 tables."""
    fresh = TableCache(capacity=2)
    monkeypatch.setattr(_hsv_table, "CACHE", fresh)
    return fresh


@pytest.mark.parametrize("name, severity", [("brightness", 3), ("saturate", 5)])
def test_the_registered_corruption_gives_the_same_bytes_before_and_after_its_table(cache, monkeypatch, name, severity):
    monkeypatch.setattr(_hsv_table, "BUILD_S", _hsv_table.BUILD_S / 20)  # the table pays 20× sooner: fewer calls
    image = skimage.data.chelsea()[:40, :48]
    corruption = get(f"imagenet_c/{name}")
    calls = _hsv_table.break_even(image.shape[0] * image.shape[1])
    outputs = [corruption.apply(image, severity=severity)[0] for _ in range(calls + 2)]
    assert cache.counts == {"kernel": calls - 1, "table": 3, "builds": 1}
    for out in outputs[1:]:
        np.testing.assert_array_equal(out, outputs[0])


@pytest.fixture
def stand_in(monkeypatch):
    """build_table returns a marker of its parameters instead of a 64 MiB table."""
    built = []

    def build(params):
        built.append(params)
        return np.array(params)

    monkeypatch.setattr(_hsv_table, "build_table", build)
    return built


def _use(cache: TableCache, params, calls: int, pixels: int = 224 * 224) -> list[bool]:
    return [cache.table(params, pixels) is not None for _ in range(calls)]


def test_a_set_gets_its_table_after_the_calls_a_build_costs(stand_in):
    cache = TableCache(capacity=2)
    n = _hsv_table.break_even(224 * 224)
    assert 100 < n < 5000  # a table pays after hundreds of 224 px images, not after a few
    used = _use(cache, BRIGHTNESS_3, n + 5)
    assert used == [False] * (n - 1) + [True] * 6 and stand_in == [BRIGHTNESS_3]
    small = _hsv_table.break_even(32 * 32)
    assert small > 3 * n  # a 32 px image saves less: more of them before a table pays


def test_sets_taking_turns_never_evict_one_another(stand_in):
    """A build renders its subsets block by block: five sets in turn share two tables without rebuilding any."""
    cache = TableCache(capacity=2)
    sets = [(0.1 * k, 1.0, 0.0) for k in range(1, 6)]
    for _ in range(40):
        for params in sets:
            _use(cache, params, 100)
    assert len(stand_in) == 2 and len(cache.tables) == 2


def test_a_set_in_use_replaces_one_no_longer_used(stand_in):
    cache = TableCache(capacity=1)
    _use(cache, BRIGHTNESS_3, 5000)
    used = _use(cache, SATURATE_5, 20000)
    assert stand_in == [BRIGHTNESS_3, SATURATE_5] and used[-1] and list(cache.tables) == [SATURATE_5]


def test_no_table_with_capacity_zero_and_the_set_memory_is_bounded(stand_in, monkeypatch):
    monkeypatch.setenv(_hsv_table.ENV, "0")
    cache = TableCache()
    assert not any(_use(cache, BRIGHTNESS_3, 3000)) and stand_in == []
    cache = TableCache(capacity=1)
    for k in range(500):  # explicit parameters that change every call
        cache.table((k / 1000, 1.0, 0.0), 224 * 224)
    assert len(cache.credit) <= _hsv_table.MAX_SETS


def test_a_bad_table_count_warns_and_keeps_the_default(monkeypatch):
    monkeypatch.setenv(_hsv_table.ENV, "many")
    with pytest.warns(UserWarning, match="CORRUPTGEN_HSV_TABLES"):
        assert _hsv_table._capacity() == _hsv_table.DEFAULT_TABLES

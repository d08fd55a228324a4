"""Exact colour tables for brightness and saturate: the kernel's bytes, one gather per image.

brightness and saturate (Hendrycks & Dietterich, ICLR 2019; ``make_imagenet_c.py``) change each pixel from its own
colour alone, with parameters fixed per (corruption, severity) and no random draw. So the exact kernel of
:mod:`._hsv` evaluated once on all 2²⁴ colours (in chunks of 65,536: one blue value each) is a table of every
output, packed as uint32 bytes (R, G, B, 0), 64 MiB, and an image is one ``np.take`` of its colours' indices instead of
~25 float64 passes. The bytes are the kernel's by construction, and the kernel's equal the reference's float path on
all 2²⁴ colours (``scripts/check_hsv_exhaustive.py`` checks both).

A table pays only where a process renders enough images of one parameter set; when is measured, not guessed
(``scripts/bench_hsv_table.py`` measures the constants below). Every call credits its parameter set with what a
table would have saved on it, in units of one table build; a set whose credit reaches one build gets its table (the
ski-rental rule: never more than twice the cost of the better choice in hindsight), fewer images run the kernel as
before. Credit decays (halved after every :data:`DECAY` builds' worth of calls), so recent use counts. A process keeps
at most ``CORRUPTGEN_HSV_TABLES`` tables (default :data:`DEFAULT_TABLES`, 64 MiB each; 0: the kernel only); when
they are all taken, a set replaces the least-credited table only with more than twice its credit, so sets that take
turns (a build's subsets block by block, a random augmentation) do not evict one another.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

import cv2
import numpy as np

from ._hsv import _adjust, hsv_adjust_uint8

COLOURS = 1 << 24
_CHUNK = 1 << 16
ENV = "CORRUPTGEN_HSV_TABLES"
DEFAULT_TABLES = 3
#: CPU-seconds on one thread, measured by ``scripts/bench_hsv_table.py`` (docs/benchmarks.md shows its last run): one
#: table build; the exact kernel and the table's gather per call and per pixel (fitted on distinct 32-448 px images)
BUILD_S = 0.22
KERNEL_CALL_S, KERNEL_PIXEL_S = 4.35e-5, 8.7e-9
GATHER_CALL_S, GATHER_PIXEL_S = 3.6e-6, 1.8e-9
#: credits are halved after this many builds' worth of calls
DECAY = 16.0
#: parameter sets whose credit is kept (the lowest-credited one without a table is forgotten beyond)
MAX_SETS = 64

Params = tuple[float, float, float]  # value_shift, sat_scale, sat_shift


def build_table(params: Params) -> np.ndarray:
    """The kernel's output for all 2²⁴ colours: uint32 at index ``r | g << 8 | b << 16`` holding the bytes
    (R, G, B, 0) of the output colour (read-only)."""
    value_shift, sat_scale, sat_shift = params
    k = np.arange(_CHUNK, dtype=np.uint32)
    red, green = (k & 255).astype(np.uint8), (k >> 8).astype(np.uint8)
    blue, zero = np.empty(_CHUNK, dtype=np.uint8), np.zeros(_CHUNK, dtype=np.uint8)
    out = np.empty((3, _CHUNK), dtype=np.uint8)
    table = np.empty(COLOURS, dtype=np.uint32)
    edit_s = (sat_scale, sat_shift) != (1.0, 0.0)
    for b in range(256):
        blue.fill(b)
        _adjust([red, green, blue], out, value_shift, sat_scale, sat_shift, edit_s)
        table[b * _CHUNK : (b + 1) * _CHUNK] = cv2.merge([out[0], out[1], out[2], zero]).view(np.uint32).reshape(-1)
    table.setflags(write=False)
    return table


def apply_table(image: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The HxWx3 uint8 ``image`` through ``table`` (:func:`build_table`): one gather of its colours."""
    h, w = image.shape[:2]
    index = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2RGBA).view(np.uint32).reshape(h, w)
    np.bitwise_and(index, COLOURS - 1, out=index)  # the alpha byte (255) off: r | g << 8 | b << 16
    return cv2.cvtColor(np.take(table, index).view(np.uint8).reshape(h, w, 4), cv2.COLOR_RGBA2RGB)


def savings(pixels: int) -> float:
    """What a table saves on one call of ``pixels`` pixels, in table builds (:data:`BUILD_S`)."""
    return (KERNEL_CALL_S - GATHER_CALL_S + (KERNEL_PIXEL_S - GATHER_PIXEL_S) * pixels) / BUILD_S


def break_even(pixels: int) -> int:
    """How many calls of ``pixels`` pixels, one parameter set, make a process build that set's table."""
    return int(np.ceil(1.0 / savings(pixels)))


class TableCache:
    """The tables of one process and the credit of each parameter set (see the module docstring)."""

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self.credit: dict[Params, float] = {}
        self.tables: dict[Params, np.ndarray] = {}
        self.traffic = 0.0
        self.counts = {"kernel": 0, "table": 0, "builds": 0}
        self.lock = threading.Lock()

    def table(self, params: Params, pixels: int) -> np.ndarray | None:
        """The table of ``params`` if it exists or is worth building now; ``None``: run the kernel."""
        if self.capacity is None:
            self.capacity = _capacity()
        if self.capacity <= 0 or pixels <= 0 or sys.byteorder != "little":
            return None
        gain = savings(pixels)
        with self.lock:
            self.traffic += gain
            if self.traffic >= DECAY:
                self._decay()
            credit = self.credit[params] = self.credit.get(params, 0.0) + gain
            table = self.tables.get(params)
            if table is None and credit >= 1.0 and self._make_room(credit):
                table = self.tables[params] = build_table(params)
                self.counts["builds"] += 1
            if len(self.credit) > MAX_SETS:
                self._forget()
            self.counts["kernel" if table is None else "table"] += 1
            return table

    def _make_room(self, credit: float) -> bool:
        if len(self.tables) < self.capacity:
            return True
        victim = min(self.tables, key=self.credit.__getitem__)
        if 2.0 * self.credit[victim] >= credit:
            return False
        del self.tables[victim]
        return True

    def _decay(self) -> None:
        self.traffic = 0.0
        self.credit = {p: c / 2 for p, c in self.credit.items() if c >= 1e-3 or p in self.tables}

    def _forget(self) -> None:
        spare = [p for p in self.credit if p not in self.tables]
        del self.credit[min(spare, key=self.credit.__getitem__)]

    def clear(self) -> None:
        with self.lock:
            self.credit, self.tables, self.traffic = {}, {}, 0.0


def _capacity() -> int:
    value = os.environ.get(ENV, "").strip()
    if not value:
        return DEFAULT_TABLES
    try:
        return max(int(value), 0)
    except ValueError:
        warnings.warn(f"{ENV}={value!r} is not a whole number; using {DEFAULT_TABLES}", stacklevel=3)
        return DEFAULT_TABLES


#: the tables of this process (forked DataLoader workers share the parent's pages until they build their own)
CACHE = TableCache()


def hsv_adjust(image: np.ndarray, *, value_shift: float = 0.0, sat_scale: float = 1.0,
               sat_shift: float = 0.0) -> np.ndarray:  # fmt: skip
    """:func:`._hsv.hsv_adjust_uint8`, through the parameter set's table when :data:`CACHE` has or builds one."""
    params = (float(value_shift), float(sat_scale), float(sat_shift))
    table = CACHE.table(params, image.shape[0] * image.shape[1])
    if table is None:
        return hsv_adjust_uint8(image, value_shift=value_shift, sat_scale=sat_scale, sat_shift=sat_shift)
    return apply_table(image, table)

"""The allocator policy of render processes: keep large freed blocks for reuse instead of returning them to the OS.

glibc's malloc serves blocks of 128 KiB and more (a 224×224×3 float64 image is 1.2 MB) with a fresh ``mmap`` and
``munmap``s them when freed, and trims the heap top above 128 KiB; every new mapping is then zero-filled page by page
on first touch. A corruption that makes a dozen such temporaries per image (fog, motion, snow, frost, elastic and
glass blur) spends more time in those page faults than in arithmetic. :func:`tune_allocator` raises the mmap and trim
thresholds with ``mallopt`` (what ``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=…:glibc.malloc.trim_threshold=…``
does, set from Python so nobody has to export a variable): freed blocks stay in the heap and the next image reuses
them. The heap may keep up to :data:`TRIM_THRESHOLD` of freed memory. Pixels never depend on it.

It runs once per process, wherever a corruption runs: at the start of the first chunk a process renders (the driver,
local workers, Ray workers) and at the first ``Corruption.apply`` of a process (``corruptions.get(name).apply`` or
``__call__`` in a user's loop, ``augment.RandomCorruption`` in a DataLoader worker or the main process), so that
on-the-fly corruption runs at build speed. ``CORRUPTGEN_MALLOC=default`` in the environment (read at that first
call; DataLoader workers inherit it) leaves glibc's policy as it is. Elsewhere (macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: glibc's ``M_TRIM_THRESHOLD`` and ``M_MMAP_THRESHOLD`` (``malloc.h``).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: blocks below this come from the heap (glibc's ceiling for the threshold on 64-bit systems is 32 MiB).
MMAP_THRESHOLD = 32 << 20
#: freed memory at the heap top is returned to the OS only beyond this.
TRIM_THRESHOLD = 256 << 20
#: the opt-out: ``CORRUPTGEN_MALLOC=default`` keeps glibc's own thresholds
ENV = "CORRUPTGEN_MALLOC"
_OPT_OUT = ("default", "off", "0")

_state: dict[str, bool] = {}


def tune_allocator() -> bool:
    """Apply the policy once per process; True if glibc accepted it (idempotent, never raises; False when
    ``CORRUPTGEN_MALLOC=default`` opts out)."""
    done = _state.get("done")
    if done is None:
        done = _state["done"] = os.environ.get(ENV, "").strip().lower() not in _OPT_OUT and _apply()
    return done


def _apply() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # glibc returns 1 on success; musl's stub returns 0 for everything
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))

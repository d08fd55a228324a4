"""Kernel statistics: centroid, RMS radius, centroid direction, MTF50, L1 distance and stack comparisons.

Used to validate regenerated OpticsBench kernels against the published stacks and
to compare kernel types as in Müller et al. ICCVW 2023 §3.2 (MTF50 on 0°/45°/90°/135° slices). All functions are
vectorised over leading axes: a kernel array is ``(..., K, K)`` with rows = y (down) and columns = x.
"""

from __future__ import annotations

import numpy as np

#: Compass labels of centroid directions, 45° sectors starting at +x, counter-clockwise with y pointing UP on screen
#: (so "N" is towards row 0).
DIRECTIONS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
#: Centroids closer than this to the centre pixel (px) have direction "C".
CENTRE_TOL_PX = 0.05


def _normalised(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.float64)
    return k / k.sum(axis=(-1, -2), keepdims=True)


def _offsets(size: int) -> np.ndarray:
    return np.arange(size, dtype=np.float64) - size // 2


def centroid(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cx, cy) in px relative to the centre pixel (K // 2); cy > 0 is towards the bottom row."""
    k = _normalised(k)
    ys, xs = _offsets(k.shape[-2]), _offsets(k.shape[-1])
    return (k.sum(axis=-2) * xs).sum(axis=-1), (k.sum(axis=-1) * ys).sum(axis=-1)


def rms_radius(k: np.ndarray) -> np.ndarray:
    """RMS radius (px) about each kernel's own centroid (the published stacks)."""
    k = _normalised(k)
    cx, cy = centroid(k)
    ys, xs = _offsets(k.shape[-2]), _offsets(k.shape[-1])
    var_x = (k.sum(axis=-2) * (xs - cx[..., None]) ** 2).sum(axis=-1)
    var_y = (k.sum(axis=-1) * (ys - cy[..., None]) ** 2).sum(axis=-1)
    return np.sqrt(var_x + var_y)


def centroid_angle(k: np.ndarray) -> np.ndarray:
    """Angle (degrees, −180..180] of the centroid offset, counter-clockwise from +x with y up on screen."""
    cx, cy = centroid(k)
    return np.degrees(np.arctan2(-cy, cx))


def centroid_direction(k: np.ndarray, tol: float = CENTRE_TOL_PX) -> np.ndarray:
    """Compass label (:data:`DIRECTIONS`, or "C" within ``tol`` px of the centre) of each kernel's centroid."""
    cx, cy = centroid(k)
    sector = np.round(np.degrees(np.arctan2(-cy, cx)) / 45.0).astype(int) % 8
    labels = np.asarray(DIRECTIONS)[sector]
    return np.where(np.hypot(cx, cy) < tol, "C", labels)


def l1_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ|a − b| per kernel (both L1-normalised first; 0 = identical, 2 = disjoint)."""
    return np.abs(_normalised(a) - _normalised(b)).sum(axis=(-1, -2))


def mtf_slices(k: np.ndarray, pad: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """MTF along 0°, 45°, 90°, 135° (paper §3.2) from a zero-padded FFT.

    Returns ``(freqs (4, F) cycles/px, mtf (..., 4, F))`` up to the Nyquist radius 0.5 cycles/px.
    """
    k = _normalised(k)
    mtf = np.abs(np.fft.fft2(k, s=(pad, pad)))
    n = pad // 2 + 1
    idx = np.arange(n)
    f_axis = idx / pad
    slices = np.stack(
        [
            mtf[..., 0, idx],  # 0°: along x
            mtf[..., idx, idx],  # 45°
            mtf[..., idx, 0],  # 90°: along y
            mtf[..., (-idx) % pad, idx],  # 135°
        ],
        axis=-2,
    )
    freqs = np.stack([f_axis, f_axis * np.sqrt(2), f_axis, f_axis * np.sqrt(2)])
    keep = f_axis * np.sqrt(2) <= 0.5 + 1e-12
    # keep all samples of axis slices; diagonal ones only up to the Nyquist radius (NaN beyond)
    slices = slices.copy()
    slices[..., 1, ~keep] = np.nan
    slices[..., 3, ~keep] = np.nan
    return freqs, slices


def mtf50(k: np.ndarray, pad: int = 256) -> np.ndarray:
    """Frequency (cycles/px) where the MTF first falls to 0.5, averaged over the 0/45/90/135° slices.

    Linear interpolation between FFT samples; a slice that stays above 0.5 up to Nyquist counts as 0.5.
    """
    freqs, mtf = mtf_slices(k, pad)
    below = np.nan_to_num(mtf, nan=1.0) < 0.5
    first = np.argmax(below, axis=-1)  # index of the first sample below 0.5 (0 if none)
    has = below.any(axis=-1)
    i1 = np.maximum(first, 1)
    m0 = np.take_along_axis(mtf, (i1 - 1)[..., None], axis=-1)[..., 0]
    m1 = np.take_along_axis(mtf, i1[..., None], axis=-1)[..., 0]
    f = np.broadcast_to(freqs, mtf.shape)
    f0 = np.take_along_axis(f, (i1 - 1)[..., None], axis=-1)[..., 0]
    f1 = np.take_along_axis(f, i1[..., None], axis=-1)[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        f50 = f0 + (m0 - 0.5) / (m0 - m1) * (f1 - f0)
    f50 = np.where(has, f50, 0.5)
    return f50.mean(axis=-1)


def kernel_stats(k: np.ndarray) -> dict[str, np.ndarray]:
    """All per-kernel statistics of a stack ``(..., K, K)``."""
    cx, cy = centroid(k)
    return {
        "rms_radius": rms_radius(k),
        "centroid_x": cx,
        "centroid_y": cy,
        "direction": centroid_direction(k),
        "mtf50": mtf50(k),
        "peak": np.asarray(_normalised(k).max(axis=(-1, -2))),
    }


def pad_to(k: np.ndarray, size: int) -> np.ndarray:
    """Zero-pad the last two axes symmetrically to ``size`` (odd kernels keep their centre pixel)."""
    extra = size - k.shape[-1]
    if extra < 0 or extra % 2:
        raise ValueError(f"cannot pad a {k.shape[-1]}-px kernel to {size} px")
    p = extra // 2
    return np.pad(k, [(0, 0)] * (k.ndim - 2) + [(p, p), (p, p)])


def compare_stacks(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Per-kernel comparison of two stacks (M, S, 3, K, K); a stack with one mode is broadcast over the other's.

    Returns ``l1``, ``rms_ratio`` (a / b), ``centroid_shift`` (px, |c_a − c_b|), ``direction_a``/``direction_b``
    and ``direction_equal``, each of the broadcast shape (M, S, 3).
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    size = max(a.shape[-1], b.shape[-1])
    a, b = pad_to(a, size), pad_to(b, size)
    a, b = np.broadcast_arrays(a, b)
    ca, cb = centroid(a), centroid(b)
    da, db = centroid_direction(a), centroid_direction(b)
    return {
        "l1": l1_distance(a, b),
        "rms_ratio": rms_radius(a) / rms_radius(b),
        "centroid_shift": np.hypot(ca[0] - cb[0], ca[1] - cb[1]),
        "direction_a": da,
        "direction_b": db,
        "direction_equal": da == db,
    }


def validation_summary(cmp: dict[str, np.ndarray], rms_tol: float = 0.10, l1_max: float = 0.3) -> dict:
    """JSON-safe summary of :func:`compare_stacks`: goal flags (RMS ±10 %, L1 ≤ 0.3, same direction) and maxima."""
    ratio_dev = np.abs(cmp["rms_ratio"] - 1.0)
    return {
        "kernels": int(cmp["l1"].size),
        "l1_mean": float(cmp["l1"].mean()),
        "l1_max": float(cmp["l1"].max()),
        "rms_ratio_min": float(cmp["rms_ratio"].min()),
        "rms_ratio_max": float(cmp["rms_ratio"].max()),
        "centroid_shift_max_px": float(cmp["centroid_shift"].max()),
        "direction_mismatches": int((~cmp["direction_equal"]).sum()),
        "goal_rms_within_10pct": bool((ratio_dev <= rms_tol).all()),
        "goal_l1_le_0.3": bool((cmp["l1"] <= l1_max).all()),
        "goal_direction_equal": bool(cmp["direction_equal"].all()),
    }


def worst_kernels(cmp: dict[str, np.ndarray], n: int = 5, modes=None, channels: str = "RGB") -> list[dict]:
    """The ``n`` kernels with the largest L1 distance, as JSON-safe rows."""
    l1 = cmp["l1"]
    order = np.argsort(-l1, axis=None, kind="stable")[:n]
    rows = []
    for flat in order:
        m, s, c = np.unravel_index(flat, l1.shape)
        rows.append(
            {
                "index": int(m),
                "mode": int(modes[m]) if modes is not None else int(m),
                "severity": int(s) + 1,
                "channel": channels[c],
                "l1": float(l1[m, s, c]),
                "rms_ratio": float(cmp["rms_ratio"][m, s, c]),
                "centroid_shift_px": float(cmp["centroid_shift"][m, s, c]),
                "direction": f"{cmp['direction_a'][m, s, c]}/{cmp['direction_b'][m, s, c]}",
            }
        )
    return rows

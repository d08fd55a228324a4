"""VCR noise operations on one strength s: Gaussian, shot and impulse noise (ImageNet-C) and uniform noise
(Geirhos et al. 2018); the table in :mod:`.domains` maps s to their parameters."""

from __future__ import annotations

import math

import numpy as np

from .ops_common import Field, _identity_at_zero, _u8, _u8_unit

# ------------------------------------------------------------------------------------------- 1. gaussian noise
GAUSS_SIGMA_MAX = 8.0  # on the [0, 1] scale


def _gauss_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"z": rng.standard_normal((*shape, 3), dtype=np.float32)}


@_identity_at_zero
def _gauss_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """``clip(x + σ·z)`` with σ = 8s (ImageNet-C ``gaussian_noise`` with an injected N(0, 1) field)."""
    return _u8(image.astype(np.float32) + np.float32(255.0 * s * GAUSS_SIGMA_MAX) * fld["z"], fld)


# ------------------------------------------------------------------------------------------- 2. shot noise
SHOT_STD_MAX = 30.0  # noise std at white on the [0, 1] scale; photons at white λ = 1 / std² ≥ 1/900


def poisson_quantile(u: np.ndarray, mu: np.ndarray, z: np.ndarray | None = None, *, exact_below: float = 10.0):
    """Smallest k ≥ 0 with ``P(Poisson(μ) ≤ k) ≥ u``, elementwise (float64 result).

    Inverse-CDF sampling from one uniform field u couples the draws across μ (k is non-decreasing in μ). Below
    ``exact_below`` expected counts the CDF is accumulated exactly; above, the Cornish-Fisher expansion of the quantile
    is used (``z = Φ⁻¹(u)``, pass it to skip the computation): it is off by one count on ≤ 1.2 % of the values at
    μ = 10 and fewer beyond.
    """
    u = np.asarray(u, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    k = np.empty(mu.shape, dtype=np.float64)
    small = mu < exact_below
    if not small.all():
        big = ~small
        from scipy import special  # scipy.special loads on first use (~0.3 CPU-s): not at `corruptgen list`

        m = mu[big]
        zz = special.ndtri(u[big]) if z is None else np.asarray(z, dtype=np.float64)[big]
        sd = np.sqrt(m)
        q = m + sd * zz + (zz * zz - 1) / 6 + (zz**3 - 7 * zz) / (72 * sd)
        k[big] = np.maximum(np.ceil(q - 0.5), 0)
    if small.any():
        m, uu = mu[small], u[small]
        pmf = np.exp(-m)
        cdf = pmf.copy()
        ks = np.zeros_like(m)
        active = np.nonzero(cdf < uu)[0]
        limit = int(exact_below + 12 * math.sqrt(exact_below) + 40)
        j = 0
        while active.size and j < limit:
            j += 1
            ks[active] = j
            pmf_a = pmf[active] * (m[active] / j)
            pmf[active] = pmf_a
            cdf[active] += pmf_a
            active = active[cdf[active] < uu[active]]
        k[small] = ks
    return k


def _shot_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    from scipy import special

    u = rng.random((*shape, 3))
    return {"u": u, "z": special.ndtri(u)}


def _shot_photons(s: float) -> float:
    return 1.0 / (s * SHOT_STD_MAX) ** 2


@_identity_at_zero
def _shot_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """``clip(Poisson(x·λ) / λ)`` (ImageNet-C ``shot_noise``), λ = 1/(30s)² photons at white, by inverse CDF."""
    lam = _shot_photons(s)
    k = poisson_quantile(fld["u"], image * (lam / 255.0), fld.get("z"))
    return _u8(k * (255.0 / lam), fld)


# ------------------------------------------------------------------------------------------- 3. impulse noise
IMPULSE_AMOUNT_MAX = 1.0


def _impulse_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"flip": rng.random((*shape, 3), dtype=np.float32), "salt": rng.random((*shape, 3), dtype=np.float32) < 0.5}


@_identity_at_zero
def _impulse_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Salt-and-pepper per value with amount p = s (ImageNet-C ``impulse_noise`` = skimage ``s&p``, salt:pepper 1:1):
    values with ``flip < p`` become 255 (``salt``) or 0; the set of hit values grows with p."""
    out = image.copy()
    hit = fld["flip"] < np.float32(s * IMPULSE_AMOUNT_MAX)
    out[hit & fld["salt"]] = 255
    out[hit & ~fld["salt"]] = 0
    return out


# ------------------------------------------------------------------------------------------- 14. uniform noise
UNIFORM_CONTRAST = 0.3
UNIFORM_WIDTH_MAX = 1.5
UNIFORM_FADE_END = 0.45  # s at which the fade to Geirhos' grey, low-contrast base image is complete
UNIFORM_WIDTH_POWER = 2
_SKIMAGE_GRAY = np.array([0.2125, 0.7154, 0.0721], dtype=np.float32)


def _uniform_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"u": rng.random(shape, dtype=np.float32)}


def _uniform_parts(s: float) -> tuple[float, float, float]:
    """(fade, contrast, width) at s: the fade a = min(s / 0.45, 1) mixes the colour image towards its grey and the
    contrast 1 → 0.3 together (Geirhos' base image at a = 1); beyond s = 0.45 the width w = 1.5·t²,
    t = (s − 0.45)/0.55 (the square spreads the steep first part of the noise's Δv over more of s)."""
    s = min(max(float(s), 0.0), 1.0)
    fade = min(s / UNIFORM_FADE_END, 1.0)
    t = max(s - UNIFORM_FADE_END, 0.0) / (1.0 - UNIFORM_FADE_END)
    width = UNIFORM_WIDTH_MAX * t**UNIFORM_WIDTH_POWER
    return fade, 1.0 - fade * (1.0 - UNIFORM_CONTRAST), width


@_identity_at_zero
def _uniform_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Geirhos et al. (2018) uniform noise, led in by a fade: ``c·((1 − a)·x + a·grey(x)) + (1 − c)/2`` with grey =
    skimage ``rgb2gray``, a the fade and c = 1 − 0.7a the contrast, then ``+ U(−w, w)``, clipped. For s ≥ 0.45
    (a = 1, c = 0.3) it is exactly Geirhos' grey, contrast-0.3 image plus noise (three equal channels)."""
    fade, contrast, width = _uniform_parts(s)
    x = image.astype(np.float32) / 255.0
    gray = (x @ _SKIMAGE_GRAY)[..., None]
    y = np.float32(contrast) * (gray if fade >= 1 else np.float32(1 - fade) * x + np.float32(fade) * gray)
    y += np.float32((1 - contrast) / 2)
    if width > 0:
        y = y + np.float32(width) * (2 * fld["u"][..., None] - 1)
    out = _u8_unit(np.clip(y, 0, 1), {"_dither": fld["_dither"][..., :1]})  # one dither: grey stays grey
    return np.repeat(out, 3, axis=2) if out.shape[2] == 1 else out

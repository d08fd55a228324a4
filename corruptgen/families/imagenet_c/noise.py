"""ImageNet-C noise corruptions: gaussian, shot, impulse and speckle noise (Hendrycks & Dietterich, ICLR 2019).

Pure functions of a float image ``x`` in [0, 1] (HxWxC) returning a clipped float image; they make the same random
calls as hendrycks/robustness ``make_imagenet_c.py`` (there on the global ``np.random``, here on ``rng``), so a seeded
Generator reproduces the reference draw for draw. ``noise`` injects a standard-normal field instead (common random
numbers across parameter values).
"""

from __future__ import annotations

import numpy as np


def _normal(rng: np.random.Generator | None, shape: tuple[int, ...], scale: float, noise: np.ndarray | None):
    if noise is not None:
        if noise.shape != shape:
            raise ValueError(f"noise field has shape {noise.shape}, expected {shape}")
        return noise * scale
    if rng is None:
        raise ValueError("give rng or a noise field")
    return rng.normal(size=shape, scale=scale)


def gaussian_noise(x: np.ndarray, sigma: float, rng: np.random.Generator | None = None, *,
                   noise: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """``clip(x + N(0, sigma))``; ``noise``: an optional standard-normal field of ``x``'s shape."""
    out = _normal(rng, x.shape, sigma, noise)
    out = np.add(x, out, out=out if out.dtype == np.result_type(x, out) else None)
    return np.clip(out, 0, 1, out=out)


def shot_noise(x: np.ndarray, photons: float, rng: np.random.Generator) -> np.ndarray:
    """``clip(poisson(x * photons) / photons)``: photon noise with ``photons`` expected counts at white."""
    out = rng.poisson(x * photons) / photons
    return np.clip(out, 0, 1, out=out)


def impulse_noise(x: np.ndarray, amount: float, rng: np.random.Generator) -> np.ndarray:
    """Salt-and-pepper noise as ``skimage.util.random_noise(x, mode="s&p", amount=amount)`` (salt_vs_pepper 0.5).

    Same draws as scikit-image ≥ 0.19 (``rng.random(shape) <= p`` for "flipped", then for "salted"; no draw when
    p is 0 or 1) and the same semantics as the 2016 fix in 0.13 that the reference ran.
    """
    flipped = _bernoulli(rng, amount, x.shape)
    salted = _bernoulli(rng, 0.5, x.shape)
    out = x.copy()
    out[flipped & salted] = 1.0
    out[flipped & ~salted] = 0.0
    return np.clip(out, 0, 1, out=out)


def _bernoulli(rng: np.random.Generator, p: float, shape: tuple[int, ...]) -> np.ndarray:
    if p == 0:
        return np.zeros(shape, dtype=bool)
    if p == 1:
        return np.ones(shape, dtype=bool)
    return rng.random(shape) <= p


def speckle_noise(x: np.ndarray, sigma: float, rng: np.random.Generator | None = None, *,
                  noise: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """``clip(x + x * N(0, sigma))`` (multiplicative noise); ``noise``: optional standard-normal field."""
    out = _normal(rng, x.shape, sigma, noise)
    out *= x
    out += x
    return np.clip(out, 0, 1, out=out)

"""VCR: 14 continuous corruptions whose perceived change Δv = max(0, 1 − VIF) is uniform on [0, 1].

Shen, Hu, Czarnecki, Marsso, Chechik, "Assessing Visually-Continuous Corruption Robustness of Neural Networks
Relative to Human Performance", WACV 2025 (spec ``vcr.md``). Importing this package registers ``vcr/<name>`` for the
14 corruptions of :data:`~.domains.NAMES`::

    fn(image, rng, *, delta_v="uniform", image_format="jpg", quality=85, stratum=None) -> (image, params)

``delta_v="uniform"`` (default) draws a target Δv from ``rng`` and searches this image's strength so that the stored
image meets it (:mod:`.search`); ``delta_v="param"`` is the paper's Algorithm 1 sampling (uniform strength, Δv only
measured). ``stratum=(position, count)`` (passed by the chunk renderer for an input's ``count`` repeats, with
``position`` a per-input permutation of the repeat index) stratifies that uniform: ``v = (position + u) / count``.
Either way Δv and VIF are measured between the clean and the corrupted image AS STORED: both encoded with
``image_format``/``quality`` (the build's codec, which the benchmark passes in) and decoded. ``params`` holds the
strength, the operation's parameters, ``vif``, ``delta_v``, ``target_delta_v`` (``None`` in param mode), the
reachable range and the number of VIF evaluations.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...corruptions.registry import Corruption, Params, register
from ...plan import IMAGE_FORMATS
from ...quality.steerable import MIN_SIZE
from .domains import DOMAINS, NAMES, Domain
from .ops_blur import smooth_disk
from .ops_noise import poisson_quantile
from .search import Outcome, Scorer, find_strength, one_torch_thread, sample_strength, stored

FAMILY = "vcr"
CITE = "Shen et al., WACV 2025 (VCR); corruptions from ImageNet-C, Albumentations and Geirhos et al. 2018"
DELTA_V_MODES = ("uniform", "param")

#: Groups by visual effect (the paper's Fig. 8 classes of similar corruptions).
CATEGORY_NAMES: dict[int, str] = {1: "noise", 2: "blur", 3: "lighting and weather", 4: "colour"}
CATEGORY: dict[str, int] = {
    **dict.fromkeys(("shot_noise", "impulse_noise", "gaussian_noise", "uniform_noise"), 1),
    **dict.fromkeys(("glass_blur", "gaussian_blur", "defocus_blur", "motion_blur", "blur", "median_blur"), 2),
    **dict.fromkeys(("brightness", "frost"), 3),
    **dict.fromkeys(("hue_saturation_value", "color_jitter"), 4),
}

__all__ = [
    "CATEGORY", "CATEGORY_NAMES", "DELTA_V_MODES", "DOMAINS", "FAMILY", "NAMES", "Domain", "Outcome", "Scorer",
    "corrupt", "find_strength", "one_torch_thread", "poisson_quantile", "sample_strength", "smooth_disk", "stored",
]  # fmt: skip


def _check_options(name: str, delta_v: Any, image_format: Any, quality: Any) -> None:
    if delta_v not in DELTA_V_MODES:
        raise ValueError(f"{FAMILY}/{name}: delta_v must be one of {', '.join(DELTA_V_MODES)}, got {delta_v!r}")
    if image_format not in IMAGE_FORMATS:
        formats = ", ".join(IMAGE_FORMATS)
        raise ValueError(f"{FAMILY}/{name}: image_format must be one of {formats}, got {image_format!r}")
    if isinstance(quality, bool) or not isinstance(quality, (int, np.integer)) or not 1 <= quality <= 100:
        raise ValueError(f"{FAMILY}/{name}: quality must be an integer in 1..100, got {quality!r}")


def _check_fixed(name: str, options: Mapping[str, Any]) -> None:
    """A subset's fixed options (checked when the plan is made)."""
    unknown = sorted(set(options) - {"delta_v", "image_format", "quality"})
    if unknown:
        raise ValueError(f"{FAMILY}/{name}: unknown options {unknown}; known: delta_v, image_format, quality")
    _check_options(name, options.get("delta_v", "uniform"), options.get("image_format", "jpg"),
                   options.get("quality", 85))  # fmt: skip


def _check_stratum(name: str, stratum: Any) -> tuple[int, int]:
    if stratum is None:
        return 0, 1
    ok = isinstance(stratum, (tuple, list)) and len(stratum) == 2
    ok = ok and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in stratum)
    if not ok or not 0 <= stratum[0] < stratum[1]:
        want = "(position, count) with 0 ≤ position < count"
        raise ValueError(f"{FAMILY}/{name}: stratum must be {want}, got {stratum!r}")
    return int(stratum[0]), int(stratum[1])


def corrupt(
    name: str,
    image: np.ndarray,
    rng: np.random.Generator,
    *,
    delta_v: str = "uniform",
    image_format: str = "jpg",
    quality: int = 85,
    stratum: tuple[int, int] | None = None,
) -> tuple[np.ndarray, Params]:
    """Corrupt one HxWx3 uint8 image with ``vcr/<name>`` (see the module docstring); returns (image, params).

    Draw order from ``rng``: one uniform u (the target quantile, or the strength in param mode; with
    ``stratum=(position, count)`` the quantile is ``(position + u) / count``), then the corruption's field. Images
    must be at least 72 px a side (VIF's 4-level pyramid).
    """
    domain = DOMAINS[name]
    _check_options(name, delta_v, image_format, quality)
    position, count = _check_stratum(name, stratum)
    h, w = image.shape[:2]
    if min(h, w) < MIN_SIZE:
        raise ValueError(f"{FAMILY}/{name}: Δv needs images of at least {MIN_SIZE}x{MIN_SIZE} px, got {w}x{h}")
    v = float(rng.random())
    if count > 1:
        v = (position + v) / count
    fld = domain.make_field(rng, image)
    with one_torch_thread():
        scorer = Scorer(image, image_format, int(quality))
        if delta_v == "uniform":
            out = find_strength(domain, image, fld, scorer, v)
        else:
            s = sample_strength(domain, v)
            result = domain.apply(image, s, fld)
            vif = scorer.exact(result)
            out = Outcome(result, s, vif, max(0.0, 1.0 - vif), evaluations=scorer.evaluations)
    params: Params = {
        "strength": out.strength,
        **domain.params(out.strength, fld),
        "vif": out.vif,
        "delta_v": out.delta_v,
        "target_delta_v": out.target,
        "delta_v_mode": delta_v,
        "reachable_delta_v": None if out.reachable is None else [out.reachable[0], out.reachable[1]],
        "evaluations": out.evaluations,
        "stratum": None if stratum is None else [position, count],
        "stored_as": f"{image_format}" if image_format == "png" else f"{image_format} q{int(quality)}",
    }
    return out.image, params


def _make_fn(name: str):
    def fn(
        image: np.ndarray, rng: np.random.Generator, *, stratum: tuple[int, int] | None = None, **options: Any
    ) -> tuple[np.ndarray, Params]:
        unknown = sorted(set(options) - {"delta_v", "image_format", "quality"})
        if unknown:
            known = "delta_v, image_format, quality, stratum"
            raise TypeError(f"{FAMILY}/{name}: unexpected options {unknown}; known: {known}")
        return corrupt(name, image, rng, stratum=stratum, **options)

    fn.__name__ = name
    fn.__doc__ = f"``vcr/{name}``: {DOMAINS[name].mapping}."
    return fn


def _register_all() -> None:
    for name in NAMES:
        d = DOMAINS[name]
        register(Corruption(
            name=name, family=FAMILY, fn=_make_fn(name), params={"strength": [0.0, 1.0], **d.domain},
            category=CATEGORY[name], cite=CITE, reference=f"{d.source}: {d.reference}",
            fidelity=f"continuous strength s ∈ [0, 1]: {d.mapping}", context=("stratum",),
            check=functools.partial(_check_fixed, name),
        ))  # fmt: skip


_register_all()

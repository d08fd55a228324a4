"""VCR: 14 continuous corruptions whose perceived change Δv = max(0, 1 − VIF) is uniform on [0, 1].

Shen, Hu, Czarnecki, Marsso, Chechik, "Assessing Visually-Continuous Corruption Robustness of Neural Networks
Relative to Human Performance", WACV 2025. Importing this package registers ``vcr/<name>`` for the
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
from ...family.plan import IMAGE_FORMATS
from .domains import DOMAINS, NAMES, Domain
from .ops_blur import smooth_disk
from .ops_noise import poisson_quantile
from .search import (
    REVISION,
    Job,
    Outcome,
    Scorer,
    find_strength,
    one_torch_thread,
    sample_strength,
    search_samples,
    stored,
)

FAMILY = "vcr"
CITE = "Shen et al., WACV 2025 (VCR); corruptions from ImageNet-C, Albumentations and Geirhos et al. 2018"
DELTA_V_MODES = ("uniform", "param")
#: Fixed options of every VCR corruption (the benchmark passes all of them).
OPTIONS = ("delta_v", "image_format", "quality", "search", "search_group")

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
    "corrupt", "corrupt_group", "find_strength", "one_torch_thread", "poisson_quantile", "sample_strength",
    "smooth_disk", "stored",
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
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{FAMILY}/{name}: unknown options {unknown}; known: {', '.join(OPTIONS)}")
    _check_options(name, options.get("delta_v", "uniform"), options.get("image_format", "jpg"),
                   options.get("quality", 85))  # fmt: skip
    _check_group(name, options.get("search_group", 1), 1)
    _check_revision(name, options.get("search", REVISION))


def _check_stratum(name: str, stratum: Any) -> tuple[int, int]:
    if stratum is None:
        return 0, 1
    ok = isinstance(stratum, (tuple, list)) and len(stratum) == 2
    ok = ok and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in stratum)
    if not ok or not 0 <= stratum[0] < stratum[1]:
        want = "(position, count) with 0 ≤ position < count"
        raise ValueError(f"{FAMILY}/{name}: stratum must be {want}, got {stratum!r}")
    return int(stratum[0]), int(stratum[1])


def _prepare(name: str, image: np.ndarray, rng: np.random.Generator, stratum: Any) -> tuple[float, dict]:
    """Check one input and draw its quantile (stratified) and its field, in that order."""
    from ...quality.steerable import MIN_SIZE  # imports torch, as every VCR render does (not `corruptgen list`)

    position, count = _check_stratum(name, stratum)
    h, w = image.shape[:2]
    if min(h, w) < MIN_SIZE:
        raise ValueError(f"{FAMILY}/{name}: Δv needs images of at least {MIN_SIZE}x{MIN_SIZE} px, got {w}x{h}")
    v = float(rng.random())
    if count > 1:
        v = (position + v) / count
    return v, DOMAINS[name].make_field(rng, image)


def corrupt(
    name: str,
    image: np.ndarray,
    rng: np.random.Generator,
    *,
    delta_v: str = "uniform",
    image_format: str = "jpg",
    quality: int = 85,
    stratum: tuple[int, int] | None = None,
    search_group: int = 1,
    search: int = REVISION,
) -> tuple[np.ndarray, Params]:
    """Corrupt one HxWx3 uint8 image with ``vcr/<name>`` (see the module docstring); returns (image, params).

    Draw order from ``rng``: one uniform u (the target quantile, or the strength in param mode; with
    ``stratum=(position, count)`` the quantile is ``(position + u) / count``), then the corruption's field. Images
    must be at least 72 px a side (VIF's 4-level pyramid). The search is a group of one (:func:`corrupt_group`
    searches several samples together; ``search_group`` only bounds a group's size).
    """
    return corrupt_group(name, [image], [rng], [stratum], delta_v=delta_v, image_format=image_format,
                         quality=quality, search_group=search_group, search=search)[0]  # fmt: skip


def corrupt_group(
    name: str,
    images: list[np.ndarray],
    rngs: list[np.random.Generator],
    strata: list[tuple[int, int] | None],
    *,
    delta_v: str = "uniform",
    image_format: str = "jpg",
    quality: int = 85,
    search_group: int = 1,
    search: int = REVISION,
) -> list[tuple[np.ndarray, Params]]:
    """Corrupt a group of at most ``search_group`` samples (draws per sample as :func:`corrupt`); in uniform mode
    their searches share VIF batches, one candidate per member per round (:func:`.search.search_samples`), so each
    result depends on the group, fixed by the plan, not on how a build batches samples."""
    domain = DOMAINS[name]
    _check_options(name, delta_v, image_format, quality)
    _check_group(name, search_group, len(images))
    _check_revision(name, search)
    drawn = [_prepare(name, im, rng, st) for im, rng, st in zip(images, rngs, strata, strict=True)]
    with one_torch_thread():
        if delta_v == "uniform":
            scorer = Scorer.group(images, image_format, int(quality))
            jobs = [Job(domain, im, fld, v) for im, (v, fld) in zip(images, drawn, strict=True)]
            outcomes = search_samples(jobs, scorer)
        else:
            outcomes = []
            for im, (v, fld) in zip(images, drawn, strict=True):
                s = sample_strength(domain, v)
                result = domain.apply(im, s, fld)
                vif = Scorer(im, image_format, int(quality)).exact(result)
                outcomes.append(Outcome(result, s, vif, max(0.0, 1.0 - vif), evaluations=1))
    return [(out.image, _params(domain, out, fld, delta_v, st, image_format, quality))
            for out, (_, fld), st in zip(outcomes, drawn, strata, strict=True)]  # fmt: skip


def _check_group(name: str, search_group: Any, members: int) -> None:
    if isinstance(search_group, bool) or not isinstance(search_group, (int, np.integer)) or search_group < 1:
        raise ValueError(f"{FAMILY}/{name}: search_group must be a positive integer, got {search_group!r}")
    if not 1 <= members <= search_group:
        raise ValueError(f"{FAMILY}/{name}: a group holds 1 to {search_group} samples, got {members}")


def _check_revision(name: str, search: Any) -> None:
    if search != REVISION:
        raise ValueError(f"{FAMILY}/{name}: this corruptgen runs Δv search revision {REVISION}, not {search!r} "
                         f"(a build made by another revision is re-rendered with --overwrite)")  # fmt: skip


def _params(domain: Domain, out: Outcome, fld: dict, delta_v: str, stratum: Any, image_format: str, quality: int):
    return {
        "strength": out.strength,
        **domain.params(out.strength, fld),
        "vif": out.vif,
        "delta_v": out.delta_v,
        "target_delta_v": out.target,
        "delta_v_mode": delta_v,
        "reachable_delta_v": None if out.reachable is None else [out.reachable[0], out.reachable[1]],
        "evaluations": out.evaluations,
        "stratum": None if stratum is None else [int(stratum[0]), int(stratum[1])],
        "stored_as": f"{image_format}" if image_format == "png" else f"{image_format} q{int(quality)}",
    }


def _make_fn(name: str):
    def fn(
        image: np.ndarray, rng: np.random.Generator, *, stratum: tuple[int, int] | None = None, **options: Any
    ) -> tuple[np.ndarray, Params]:
        _check_keywords(name, options)
        return corrupt(name, image, rng, stratum=stratum, **options)

    def group_fn(images: list[np.ndarray], rngs: list[np.random.Generator], strata: list, **options: Any):
        _check_keywords(name, options)
        return corrupt_group(name, images, rngs, strata, **options)

    fn.__name__ = group_fn.__name__ = name
    fn.__doc__ = f"``vcr/{name}``: {DOMAINS[name].mapping}."
    return fn, group_fn


def _check_keywords(name: str, options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"{FAMILY}/{name}: unexpected options {unknown}; known: {', '.join(OPTIONS)}, stratum")


def group_size(options: Mapping[str, Any]) -> int:
    """Samples searched together (consecutive samples of a subset, aligned to multiples of it; 1 in param mode)."""
    return int(options.get("search_group", 1)) if options.get("delta_v", "uniform") == "uniform" else 1


def _register_all() -> None:
    for name in NAMES:
        d = DOMAINS[name]
        fn, group_fn = _make_fn(name)
        register(Corruption(
            name=name, family=FAMILY, fn=fn, group_fn=group_fn, group_size=group_size,
            params={"strength": [0.0, 1.0], **d.domain},
            category=CATEGORY[name], cite=CITE, reference=f"{d.source}: {d.reference}",
            fidelity=f"continuous strength s ∈ [0, 1]: {d.mapping}", context=("stratum",),
            check=functools.partial(_check_fixed, name),
        ))  # fmt: skip


_register_all()

"""Registered ``imagenet_c/<name>`` corruptions: severity → table parameters (or explicit, validated parameters) →
pure function on ``image / 255`` → the reference's truncating uint8 cast.

The same machinery registers the small-image variants of the benchmark (CIFAR-10-C, Tiny-ImageNet-C, ...): a
:class:`Spec` names the family, its severity tables and domains, the image size its pixel constants are written for
and its frost texture scale; the functions are the same.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ...corruptions.registry import Corruption, Params, register
from ...errors import CorruptgenError
from . import blur, digital, noise, weather
from ._frost import REFERENCE_TEXTURES, fitted_texture, load_texture
from ._ops import to_uint8
from .tables import DOMAINS, GROUPS, SEVERITIES, TABLES

FAMILY = "imagenet_c"
CITE = "Hendrycks & Dietterich, ICLR 2019 (hendrycks/robustness ImageNet-C/create_c/make_imagenet_c.py)"
REFERENCE_SIZE = 224


class ParameterError(CorruptgenError, ValueError):
    """An explicit ImageNet-C parameter outside its declared domain (or a bad severity)."""


@dataclass(frozen=True, eq=False)
class Spec:
    """One registered variant of the benchmark: corruptions ``<family>/<name>`` for every name of ``tables``.

    Attributes:
        family: corruption family prefix (``imagenet_c``, ``cifar10_c``, ...).
        title: human name (``ImageNet-C``).
        tables: corruption -> severity -> parameters (the reference script's constants).
        domains: corruption -> parameter -> domain (see :data:`~.tables.DOMAINS`).
        reference_size: image side the pixel-sized constants are written for (elastic transform scales to others).
        frost_resize: factor the frost textures are scaled by before cropping (``None``: kept as they are).
        cite: citation of the reference generator.
        script: the reference script's file name.
    """

    family: str
    title: str
    tables: Mapping[str, Mapping[int, Mapping[str, Any]]]
    domains: Mapping[str, Mapping[str, Any]]
    reference_size: int
    frost_resize: float | None
    cite: str
    script: str


# (uint8 image, params, rng, spec) -> (float image in [0, 1], already clipped, or the final uint8 image; drawn values)
Adapter = Callable[[np.ndarray, dict[str, Any], np.random.Generator, "Spec"], tuple[np.ndarray, Params]]


def _describe(domain: tuple) -> str:
    if domain and domain[0] in ("float", "int"):
        kind, lo, hi = domain
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        return f"{'an integer' if kind == 'int' else 'a number'} in [{lo_s}, {hi_s}]"
    return f"one of {list(domain)}"


def _check(name: str, field: str, value: Any, domain: tuple, family: str = FAMILY) -> Any:
    """``value`` as the declared kind, or :class:`ParameterError` naming corruption, field, value and domain."""
    bad = ParameterError(f"{family}/{name}: {field}={value!r} is outside its domain: {_describe(domain)}")
    if domain and domain[0] in ("float", "int"):
        kind, lo, hi = domain
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
            raise bad
        if kind == "int":
            if not (isinstance(value, Integral) or float(value).is_integer()):
                raise bad
            value = int(value)
        else:
            value = float(value)  # one JSON type per parameter whatever the table row holds
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise bad
        return value
    if isinstance(value, bool) or value not in domain:
        raise bad
    return int(value) if isinstance(value, Integral) else value


def resolve(name: str, severity: int | None, explicit: Mapping[str, Any], spec: Spec | None = None) -> dict[str, Any]:
    """Table parameters of ``severity`` overridden by ``explicit`` ones, all validated against the domains of
    ``spec`` (default: ImageNet-C's :data:`~.tables.TABLES` and :data:`~.tables.DOMAINS`)."""
    spec = spec or IMAGENET_C
    if not explicit and type(severity) is int and severity in SEVERITIES:
        return dict(_table_row(spec, name, severity))
    return _resolve(spec, name, severity, explicit)


@functools.cache
def _table_row(spec: Spec, name: str, severity: int) -> tuple[tuple[str, Any], ...]:
    return tuple(_resolve(spec, name, severity, {}).items())


def _resolve(spec: Spec, name: str, severity: int | None, explicit: Mapping[str, Any]) -> dict[str, Any]:
    domain, table, family = spec.domains[name], spec.tables[name], spec.family
    unknown = sorted(set(explicit) - set(domain))
    if unknown:
        raise ParameterError(f"{family}/{name}: unknown parameter(s) {', '.join(unknown)}; known: {', '.join(domain)}")
    values: dict[str, Any] = {}
    if severity is not None:
        if isinstance(severity, bool) or not isinstance(severity, Integral) or int(severity) not in SEVERITIES:
            raise ParameterError(f"{family}/{name}: severity={severity!r} is outside its domain: one of 1, 2, 3, 4, 5")
        values.update(table[int(severity)])
    values.update(explicit)
    missing = [field for field in table[1] if field not in values]
    if missing:
        raise ParameterError(f"{family}/{name}: give severity=1..5 or every parameter; missing {', '.join(missing)}")
    return {field: _check(name, field, value, domain[field], family) for field, value in values.items()}


# ---------------------------------------------------------------- adapters: (image, params, rng) -> (y, drawn)
def _angle(p: dict[str, Any], rng: np.random.Generator, low: float, high: float) -> tuple[float, Params]:
    if "angle" in p:
        return p["angle"], {}
    angle = float(rng.uniform(low, high))
    return angle, {"angle": angle}


def _motion(image: np.ndarray, p: dict[str, Any], rng: np.random.Generator, spec: Spec) -> tuple[np.ndarray, Params]:
    angle, drawn = _angle(p, rng, -45, 45)
    return blur.motion_blur_uint8(image, p["radius"], p["sigma"], angle), drawn


def _snow(image: np.ndarray, p: dict[str, Any], rng: np.random.Generator, spec: Spec) -> tuple[np.ndarray, Params]:
    field = rng.normal(size=image.shape[:2], loc=p["loc"], scale=p["scale"])  # the reference draws the field first
    angle, drawn = _angle(p, rng, -135, -45)
    args = (p["loc"], p["scale"], p["zoom"], p["threshold"], p["blur_radius"], p["blur_sigma"], p["blend"], angle)
    return weather.snow(_float32(image), *args, field=field), drawn


def _frost(image: np.ndarray, p: dict[str, Any], rng: np.random.Generator, spec: Spec) -> tuple[np.ndarray, Params]:
    h, w = image.shape[:2]
    texture = p["texture"] if "texture" in p else int(rng.integers(REFERENCE_TEXTURES))
    tex = fitted_texture(texture, (h, w), spec.frost_resize)
    top = p["top"] if "top" in p else int(rng.integers(0, tex.shape[0] - h))
    left = p["left"] if "left" in p else int(rng.integers(0, tex.shape[1] - w))
    # the reference's cast applies to the 0-255 values: np.uint8(clip(img_weight * image + frost_weight * crop, 0, 255))
    y = np.uint8(
        weather.frost_255(
            image / 255.0, p["img_weight"], p["frost_weight"], texture=texture, top=top, left=left,
            resize=spec.frost_resize,
        )
    )  # fmt: skip
    scale = tex.shape[0] / load_texture(texture).shape[0]
    return y, {"texture": texture, "top": top, "left": left, "texture_scale": scale}


def _elastic(image: np.ndarray, p: dict[str, Any], rng: np.random.Generator, spec: Spec) -> tuple[np.ndarray, Params]:
    # reference-size values (224 px for ImageNet-C) → this size: lengths (sigma, affine) scale by s, alpha by s² (the
    # smoothed field's amplitude falls as 1/sigma, so alpha·s² keeps the displacement at s× the pixels: self-similar)
    s = min(image.shape[:2]) / spec.reference_size
    y = digital.elastic_transform(_float32(image), p["alpha"] * s * s, p["sigma"] * s, p["affine"] * s, rng)
    return y, {"size_scale": s}


def _float32(image: np.ndarray) -> np.ndarray:
    """``np.array(image, dtype=np.float32) / 255.`` (the reference's first step where it works in float32; equal to
    ``(image / 255.).astype(np.float32)`` for every uint8 value)."""
    x = image.astype(np.float32)
    x /= np.float32(255)
    return x


def _simple(fn: Callable[..., np.ndarray], *fields: str, rng: bool = False, x: str = "float64") -> Adapter:
    """Adapter calling ``fn(x, *params[fields][, rng])`` on ``x = image / 255`` (the reference's first step), in
    float32 where the reference is (``x="float32"``), or on the uint8 image itself (``x="uint8"``: PIL-based)."""
    convert = {"float64": lambda image: image / 255.0, "float32": _float32, "uint8": lambda image: image}[x]

    def adapter(
        image: np.ndarray, p: dict[str, Any], generator: np.random.Generator, spec: Spec
    ) -> tuple[np.ndarray, Params]:
        x = convert(image)
        args = [p[f] for f in fields]
        return (fn(x, *args, generator) if rng else fn(x, *args)), {}

    adapter.random = rng  # type: ignore[attr-defined]
    return adapter


ADAPTERS: dict[str, Adapter] = {
    "gaussian_noise": _simple(noise.gaussian_noise, "sigma", rng=True),
    "shot_noise": _simple(noise.shot_noise, "photons", rng=True),
    "impulse_noise": _simple(noise.impulse_noise, "amount", rng=True),
    "defocus_blur": _simple(blur.defocus_blur, "radius", "alias_sigma"),
    "glass_blur": _simple(blur.glass_blur, "sigma", "max_delta", "iterations", rng=True),
    "motion_blur": _motion,
    "zoom_blur": _simple(blur.zoom_blur, "zoom_end", "zoom_step", x="float32"),
    "snow": _snow,
    "frost": _frost,
    "fog": _simple(weather.fog, "strength", "wibbledecay", rng=True),
    "brightness": _simple(weather.brightness_uint8, "delta", x="uint8"),
    "contrast": _simple(digital.contrast, "factor"),
    "elastic_transform": _elastic,
    "pixelate": _simple(digital.pixelate_uint8, "factor", x="uint8"),
    "jpeg_compression": _simple(digital.jpeg_uint8, "quality", x="uint8"),
    "speckle_noise": _simple(noise.speckle_noise, "sigma", rng=True),
    "gaussian_blur": _simple(blur.gaussian_blur, "sigma"),
    "spatter": _simple(
        weather.spatter, "loc", "scale", "sigma", "threshold", "intensity", "mode", rng=True, x="float32"
    ),
    "saturate": _simple(digital.saturate_uint8, "scale", "shift", x="uint8"),
}
#: Outputs already on the 8-bit grid (ImageMagick's PNG): cast by rounding, which is exact there.
ROUNDED = frozenset({"motion_blur"})

# measured against the transcription of the reference (tests/corruptions/imagenet_c_reference.py), same draws
FIDELITY: dict[str, str] = {
    "gaussian_noise": "exact (same draws)",
    "shot_noise": "exact (same draws)",
    "impulse_noise": "exact (skimage random_noise draws)",
    "speckle_noise": "exact (same draws)",
    "defocus_blur": "exact (same cv2 calls)",
    "gaussian_blur": "exact on test photos (cv2 Gaussian with skimage's kernel; ±1 possible)",
    "glass_blur": "exact (vectorised shuffle = the reference loop's copy semantics; injected draws)",
    "motion_blur": "ImageMagick 6 MotionBlurImage re-implemented; bit-exact vs ImageMagick 6.9.11 Q16",
    "zoom_blur": "±1 (separable float32 bilinear = scipy zoom order 1; 1 pixel in 3e6 differs)",
    "snow": "exact on test photos (ImageMagick motion blur re-implemented)",
    "frost": "exact (reference textures, draws and 0-255 arithmetic)",
    "fog": "exact (same plasma draws)",
    "brightness": "exact (skimage HSV formulas)",
    "contrast": "exact",
    "elastic_transform": "exact on test photos (map_coordinates order 1 as a bilinear gather; ±1 possible)",
    "pixelate": "exact (PIL BOX/BOX)",
    "jpeg_compression": "exact (PIL)",
    "spatter": "exact on test photos (cv2 Gaussian with skimage's kernel; ±1 possible)",
    "saturate": "exact (skimage HSV formulas)",
}

IMAGENET_C = Spec(FAMILY, "ImageNet-C", TABLES, DOMAINS, REFERENCE_SIZE, None, CITE, "make_imagenet_c.py")

REFERENCE_DRAWS: dict[str, str] = {
    "motion_blur": "angle ~ U(-45, 45)", "snow": "field ~ N(loc, scale); angle ~ U(-135, -45)",
    "frost": "texture ~ randint(5) (frost6 never used); top, left ~ randint over the texture",
}  # fmt: skip


def _check_fixed(name: str, options: Mapping[str, Any], spec: Spec | None = None) -> None:
    """A subset's fixed options: ``severity`` and/or explicit parameters inside their domains."""
    explicit = dict(options)
    resolve(name, explicit.pop("severity", None), explicit, spec)


def make_fn(name: str, spec: Spec | None = None) -> Callable[..., tuple[np.ndarray, Params]]:
    """``fn(image, rng, *, severity=None, **params) -> (uint8 image, params used)`` for corruption ``name`` of
    ``spec`` (default ImageNet-C)."""
    spec = spec or IMAGENET_C
    adapter, rounding = ADAPTERS[name], name in ROUNDED

    def fn(image: np.ndarray, rng: np.random.Generator, *, severity: int | None = None, **params: Any):
        values = resolve(name, severity, params, spec)
        y, drawn = adapter(image, values, rng, spec)
        used = {"severity": None if severity is None else int(severity), **values, **drawn}
        out = y if y.dtype == np.uint8 else to_uint8(y, rounding=rounding, clipped=True)
        return out, {k: v.item() if isinstance(v, np.generic) else v for k, v in used.items()}

    fn.__name__ = f"{spec.family}_{name}"
    fn.__doc__ = f"{spec.title} {name}: severity 1..5 or explicit parameters {list(spec.domains[name])}."
    return fn


def register_all(spec: Spec | None = None) -> None:
    """Register ``<spec.family>/<name>`` for every corruption of ``spec`` (default ImageNet-C)."""
    spec = spec or IMAGENET_C
    for name, table in spec.tables.items():
        register(
            Corruption(
                name=name,
                family=spec.family,
                fn=make_fn(name, spec),
                params={
                    "group": GROUPS[name],
                    "severities": {str(s): dict(row) for s, row in table.items()},
                    "domain": {field: list(d) for field, d in spec.domains[name].items()},
                    **({"draws": REFERENCE_DRAWS[name]} if name in REFERENCE_DRAWS else {}),
                },
                category=None,
                cite=spec.cite,
                reference=f"{spec.script} {name}(x, severity)",
                fidelity=FIDELITY[name],
                check=functools.partial(_check_fixed, name, spec=spec),
                random=getattr(ADAPTERS[name], "random", True),
            )
        )

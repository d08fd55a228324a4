"""Per-image strength search so that the perceived change Δv of the STORED image follows a uniform target.

VCR (Shen et al., WACV 2025) wants test images whose Δv = max(0, 1 − VIF) covers [0, 1] uniformly; sampling the
parameter uniformly (its Algorithm 1) leaves bins empty (§4.1, Tab. 2), and its appendix proposes inverting a
fitted (c, Δv) spline. Here each sample is searched directly, per image:

1. ``reference`` = the clean image as it is stored (encode → decode with the build's codec), prepared once
   (:class:`~corruptgen.quality.VIFReference` in float64 on one torch thread; every VIF the search compares is
   rounded to :data:`QUANTUM`, so its decisions do not depend on the CPU's instruction set, the thread count or the
   batch a candidate is scored in — float32, ~1.7x faster, moved VIF(x, x) by up to 4e-4 on some CPUs);
2. the target is ``t = v ∈ [0, 1)``, a uniform quantile from the caller (:func:`~corruptgen.families.vcr.corrupt`
   draws it from the sample's generator, stratified over an input's repeats); every domain starts at the clean
   image (Δv = 0 at s = 0). ``hi`` = Δv at s = 1 is the most this image allows (VIF keeps a floor of ~0.02–0.1 for
   noise or blur that leaves texture); a target above it takes s = 1, the closest achievable image;
3. rounds of K candidates (batched VIF) inside the current bracket around a monotone (PCHIP) interpolation of
   every point measured so far, in the warped variable ``u`` (:attr:`Domain.warp`), until ``|Δv − t| ≤ tol``, the
   bracket cannot shrink further, or the round budget is spent; the closest candidate wins.

Every Δv is measured on the candidate after the same encode → decode as the build applies, so the stored value is
``VIF(decoded stored clean, decoded stored corrupted)`` exactly.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from PIL import Image
from scipy.interpolate import PchipInterpolator

from ...io.codec import encode_image
from ...quality.vif import VIFReference, vif
from .domains import Domain

#: Grid the search's VIF values are rounded to: float64 results differ across CPUs and batch shapes by ~1e-13,
#: so a decision flips only for a value within that distance of a grid point; far below the tolerance below.
QUANTUM = 1e-6
#: Decimals of the stored ``vif`` (the exact float64 value, rounded so JSON bytes do not carry the last bits).
STORED_DECIMALS = 10
#: Early-stop tolerance on |Δv − target| of the continuous search.
TOL = 0.004
#: Maximum number of rounds; half-width (in u) of the first round's 3 candidates around the interpolated guess.
ROUNDS = 8
FIRST_WIDTH = 0.08


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run torch on one intra-op thread (reductions then do not depend on the thread count), restoring it after."""
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)


def stored(image: np.ndarray, image_format: str = "jpg", quality: int = 85) -> np.ndarray:
    """``image`` as a build stores it: :func:`~corruptgen.io.codec.encode_image` then decode (PIL; for JPEG and
    WebP identical to OpenCV's decoder). PNG is lossless: returned unchanged."""
    if image_format == "png":
        return image
    data = encode_image(image, image_format, quality)
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


class Scorer:
    """VIF / Δv of candidates against one clean image, both as stored.

    :meth:`vif` scores candidates for the search (float64, rounded to :data:`QUANTUM`; :meth:`raw` unrounded, whose
    value is stored with the chosen candidate to :data:`STORED_DECIMALS`); :meth:`exact` scores one image alone.
    """

    def __init__(self, clean: np.ndarray, image_format: str = "jpg", quality: int = 85) -> None:
        self.image_format, self.quality = image_format, int(quality)
        self.clean = stored(clean, image_format, quality)
        self.reference = VIFReference(self.clean, device="cpu", dtype=torch.float64)
        self.evaluations = 0

    def vif(self, images: list[np.ndarray]) -> np.ndarray:
        """VIF of each candidate (after the build's encode → decode), on the :data:`QUANTUM` grid."""
        return quantize(self.raw(images))

    def raw(self, images: list[np.ndarray]) -> np.ndarray:
        """float64 VIF of each candidate, unrounded (its last bits depend on the CPU and the batch)."""
        batch = np.stack([stored(im, self.image_format, self.quality) for im in images])
        self.evaluations += len(images)
        return self.reference.score(batch).cpu().numpy().astype(np.float64)

    def exact(self, image: np.ndarray) -> float:
        """float64 VIF of one candidate as stored: the value written to the sample's json."""
        self.evaluations += 1
        value = vif(self.clean, stored(image, self.image_format, self.quality), dtype=torch.float64)
        return round(float(value), STORED_DECIMALS)


def quantize(values: np.ndarray) -> np.ndarray:
    """``values`` on the :data:`QUANTUM` grid (what every search decision compares)."""
    return np.round(np.asarray(values, dtype=np.float64) / QUANTUM) * QUANTUM


def delta_v_of(vif: np.ndarray | float) -> np.ndarray | float:
    """VCR Def. 3: ``max(0, 1 − VIF)``."""
    return np.maximum(0.0, 1.0 - np.asarray(vif, dtype=np.float64)) if np.ndim(vif) else max(0.0, 1.0 - float(vif))


@dataclass
class Outcome:
    """The chosen candidate of one sample."""

    image: np.ndarray
    strength: float
    vif: float
    delta_v: float
    target: float | None = None
    reachable: tuple[float, float] | None = None
    evaluations: int = 0
    rounds: int = 0


@dataclass
class _Points:
    """Measured candidates keyed by their search coordinate u."""

    domain: Domain
    image: np.ndarray
    fld: dict
    scorer: Scorer
    data: dict[float, tuple[float, float, np.ndarray | None]] = field(default_factory=dict)  # x -> (dv, vif, img)

    def strength(self, x: float) -> float:
        return self.domain.strength(x)

    def measure(self, xs: list[float]) -> None:
        xs = [x for x in dict.fromkeys(xs) if x not in self.data]
        if not xs:
            return
        images = [self.domain.apply(self.image, self.strength(x), self.fld) for x in xs]
        raw = self.scorer.raw(images)
        for x, v, r, im in zip(xs, quantize(raw), raw, images, strict=True):
            self.data[x] = (float(delta_v_of(v)), round(float(r), STORED_DECIMALS), im)

    def known(self, x: float, image: np.ndarray, vif: float) -> None:
        self.data[x] = (float(delta_v_of(vif)), float(vif), image)

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        xs = np.array(sorted(self.data))
        dv = np.array([self.data[x][0] for x in xs])
        return xs, np.maximum.accumulate(dv)  # monotone envelope (JPEG and 8-bit rounding add small wiggles)

    def best(self, target: float) -> float:
        return min(self.data, key=lambda x: (abs(self.data[x][0] - target), x))


def _bracket(xs: np.ndarray, dv: np.ndarray, target: float) -> tuple[int, int]:
    """Indices (a, b), a < b, of the tightest measured bracket ``dv[a] ≤ target ≤ dv[b]`` of the monotone curve."""
    a = int(np.searchsorted(dv, target, side="right")) - 1
    a = min(max(a, 0), len(xs) - 2)
    b = int(np.searchsorted(dv, target, side="left"))
    b = min(max(b, a + 1), len(xs) - 1)
    return a, b


def _guess(xs: np.ndarray, dv: np.ndarray, a: int, b: int, target: float) -> float:
    """Where the monotone PCHIP interpolant through the measured points crosses ``target`` inside [xs[a], xs[b]]."""
    lo, hi = xs[a], xs[b]
    if dv[b] <= dv[a]:
        return 0.5 * (lo + hi)
    # strictly increasing knots: of a run of equal values keep the end nearest the bracket (a flat stretch below
    # the target ends where the rise starts, one above it starts where the rise ends)
    idx = np.arange(len(xs))
    left = (idx <= a) & np.concatenate([dv[:-1] < dv[1:], [True]])
    right = (idx >= b) & np.concatenate([[True], dv[1:] > dv[:-1]])
    keep = left | right | (idx == a) | (idx == b)
    x_k, y_k = xs[keep], dv[keep]
    if len(x_k) < 3 or not (x_k[0] <= lo and hi <= x_k[-1]):
        return lo + (target - dv[a]) / (dv[b] - dv[a]) * (hi - lo)
    grid = np.linspace(lo, hi, 257)
    values = PchipInterpolator(x_k, y_k)(grid)
    return float(grid[int(np.argmin(np.abs(values - target)))])


def find_strength(
    domain: Domain,
    image: np.ndarray,
    fld: dict,
    scorer: Scorer,
    v: float,
    *,
    tol: float = TOL,
    rounds: int = ROUNDS,
) -> Outcome:
    """Strength whose stored Δv is closest to the target ``t = v`` (see the module docstring)."""
    pts = _Points(domain, image, fld, scorer)
    pts.known(0.0, image, 1.0)  # s = 0 is the clean image: VIF(x, x) = 1
    pts.measure([1.0])
    lo, hi = pts.data[0.0][0], pts.data[1.0][0]
    target = float(v)
    width, previous, span = FIRST_WIDTH, None, 2.0
    if target >= hi:  # beyond this image's reach: the strongest corruption is the closest
        rounds = 0
    n_rounds = 0
    for n_rounds in range(1, rounds + 1):  # noqa: B007
        best = pts.best(target)
        if abs(pts.data[best][0] - target) <= tol:
            break
        xs, dv = pts.curve()
        a, b = _bracket(xs, dv, target)
        lo_x, hi_x = float(xs[a]), float(xs[b])
        if hi_x - lo_x < 1e-7:  # a jump in Δv: the closer side is the best this image allows
            break
        g = _guess(xs, dv, a, b, target)
        if previous is not None:  # how far the interpolation moved is the scale of its remaining error
            width = max(2.0 * abs(g - previous), 0.1 * (hi_x - lo_x))
        previous = g
        candidates = _around(lo_x, hi_x, g, width)
        if hi_x - lo_x > 0.5 * span:  # the bracket did not halve (a kink the interpolant misses): bisect too
            candidates.append(0.5 * (lo_x + hi_x))
        span = hi_x - lo_x
        pts.measure(candidates)
    best = pts.best(target)
    _, vif_best, img_best = pts.data[best]
    dv_best = float(delta_v_of(vif_best))
    return Outcome(img_best, pts.strength(best), vif_best, dv_best, target, (lo, hi), scorer.evaluations, n_rounds)


def _around(lo: float, hi: float, g: float, width: float) -> list[float]:
    """The guess and a point on either side (``±width``), kept strictly inside the bracket (lo, hi)."""
    eps = 1e-3 * (hi - lo)
    pts = {min(max(p, lo + eps), hi - eps) for p in (g - width, g, g + width)}
    return sorted(pts)


def sample_strength(domain: Domain, u: float) -> float:
    """The paper's uniform-parameter sampling (Alg. 1, ``c ~ Uniform(C)``): s = u."""
    return float(u)

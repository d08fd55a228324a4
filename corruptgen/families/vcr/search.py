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
3. the searches of a group of samples (:func:`search_samples`; the plan fixes the group) run in rounds: each round
   scores one candidate per member still searching, in one float64 VIF batch: first s = 1 (this image's reach),
   then the point where a monotone (PCHIP) interpolation of the member's measured points crosses t, in the warped
   variable ``u`` (:attr:`Domain.warp`) — or, after :data:`STALLS` rounds in a row whose bracket did not halve,
   the midpoint between that point and the bracket end that did not move (a bisection step); a member stops when
   ``|Δv − t| ≤ tol``, when its bracket cannot shrink further, or after :data:`ROUNDS` rounds; its closest
   candidate wins.

Every Δv is measured on the candidate after the same encode → decode as the build applies, so the stored value is
``VIF(decoded stored clean, decoded stored corrupted)`` exactly.
"""

from __future__ import annotations

import hashlib
import io
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from ...io.codec import encode_image
from .domains import Domain

if TYPE_CHECKING:
    from ...quality.vif import VIFReference

#: Revision of the search algorithm, part of every uniform-mode VCR plan (a build resumed by another revision would
#: mix two searches): 1 = groups with spare candidates per round (corruptgen ≤ 0.3), 2 = one candidate per member
#: per round with a bisection safeguard.
REVISION = 2
#: Grid the search's VIF values are rounded to: float64 results differ across CPUs and batch shapes by ~1e-13,
#: so a decision flips only for a value within that distance of a grid point; far below the tolerance below.
QUANTUM = 1e-6
#: Decimals of the stored ``vif`` (the exact float64 value, rounded so JSON bytes do not carry the last bits).
STORED_DECIMALS = 10
#: Early-stop tolerance on |Δv − target| of the continuous search.
TOL = 0.004
#: Maximum number of rounds after the first (a search that has not met the tolerance by then keeps its closest).
ROUNDS = 16
#: Rounds in a row whose bracket did not halve before a bisection step (interpolation alone can creep along a kink).
STALLS = 3


def one_torch_thread():
    """:func:`corruptgen.quality.vif.one_torch_thread`, imported when used (`corruptgen list` never loads torch)."""
    from ...quality.vif import one_torch_thread as inner

    return inner()


def stored(image: np.ndarray, image_format: str = "jpg", quality: int = 85) -> np.ndarray:
    """``image`` as a build stores it: :func:`~corruptgen.io.codec.encode_image` then decode (PIL; for JPEG and
    WebP identical to OpenCV's decoder). PNG is lossless: returned unchanged."""
    if image_format == "png":
        return image
    data = encode_image(image, image_format, quality)
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


class Scorer:
    """VIF / Δv of candidates against clean images, all as stored.

    ``Scorer(clean)`` scores candidates of one clean image; :meth:`group` holds several (one reference row each).
    :meth:`vif` scores for the search (float64, rounded to :data:`QUANTUM`; :meth:`raw` unrounded, whose value is
    stored with the chosen candidate to :data:`STORED_DECIMALS`); :meth:`exact` scores one image alone.
    """

    def __init__(self, clean: np.ndarray, image_format: str = "jpg", quality: int = 85) -> None:
        self.image_format, self.quality = image_format, int(quality)
        self.clean, self.reference = reference(clean, image_format, self.quality)

    @classmethod
    def group(cls, cleans: list[np.ndarray], image_format: str = "jpg", quality: int = 85) -> Scorer:
        """One scorer for the clean images of a group (row i = ``cleans[i]``)."""
        from ...quality.vif import VIFReference

        self = cls(cleans[0], image_format, quality)
        if len(cleans) > 1:
            self.reference = VIFReference.stack([reference(c, image_format, self.quality)[1] for c in cleans])
        return self

    def vif(self, images: list[np.ndarray]) -> np.ndarray:
        """VIF of each candidate (after the build's encode → decode), on the :data:`QUANTUM` grid."""
        return quantize(self.raw(images))

    def raw(self, images: list[np.ndarray], rows: list[int] | None = None) -> np.ndarray:
        """float64 VIF of each candidate (against reference row ``rows[i]``), unrounded, in ONE batch of
        ``len(images)`` (the last bits depend on the CPU and on that batch's shape, not on the other candidates)."""
        batch = np.stack([stored(im, self.image_format, self.quality) for im in images])
        value = self.reference.score(batch, chunk_size=len(images), rows=rows)
        return value.cpu().numpy().astype(np.float64)

    def exact(self, image: np.ndarray) -> float:
        """float64 VIF of one candidate as stored: the value written to the sample's json."""
        import torch

        from ...quality.vif import vif

        value = vif(self.clean, stored(image, self.image_format, self.quality), dtype=torch.float64)
        return round(float(value), STORED_DECIMALS)


_REFERENCES: OrderedDict[tuple, tuple[np.ndarray, VIFReference]] = OrderedDict()
#: Clean images whose stored form and VIF reference stay cached (one input meets every subset and repeat).
REFERENCE_CACHE = 16


def reference(clean: np.ndarray, image_format: str, quality: int) -> tuple[np.ndarray, VIFReference]:
    """``clean`` as stored and its float64 :class:`VIFReference` (always prepared alone, so a cached one is
    bit-identical to a fresh one), cached by content."""
    import torch

    from ...quality.vif import VIFReference

    key = (hashlib.blake2b(clean.tobytes(), digest_size=16).digest(), clean.shape, image_format, int(quality))
    hit = _REFERENCES.get(key)
    if hit is None:
        kept = stored(clean, image_format, quality)
        hit = _REFERENCES[key] = (kept, VIFReference(kept, device="cpu", dtype=torch.float64))
        while len(_REFERENCES) > REFERENCE_CACHE:
            _REFERENCES.popitem(last=False)
    else:
        _REFERENCES.move_to_end(key)
    return hit


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
class Job:
    """One sample to search: its domain, clean image, field and target Δv."""

    domain: Domain
    image: np.ndarray
    fld: dict
    target: float


@dataclass
class _Search:
    """The search state of one sample: measured candidates keyed by their coordinate u."""

    job: Job
    tol: float
    data: dict[float, tuple[float, float, np.ndarray | None]] = field(default_factory=dict)  # u -> (dv, vif, img)
    evaluations: int = 0
    rounds: int = 0
    done: bool = False
    span: float = 2.0
    stalls: int = 0

    def __post_init__(self) -> None:
        self.data[0.0] = (0.0, 1.0, self.job.image)  # s = 0 is the clean image: VIF(x, x) = 1

    def record(self, x: float, vif_grid: float, raw: float, image: np.ndarray) -> None:
        self.data[x] = (float(delta_v_of(vif_grid)), round(float(raw), STORED_DECIMALS), image)
        self.evaluations += 1

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        xs = np.array(sorted(self.data))
        dv = np.array([self.data[x][0] for x in xs])
        return xs, np.maximum.accumulate(dv)  # monotone envelope (JPEG and 8-bit rounding add small wiggles)

    def best(self) -> float:
        t = self.job.target
        return min(self.data, key=lambda x: (abs(self.data[x][0] - t), x))

    def finished(self) -> bool:
        """Whether the search stops: target beyond reach or met, round budget spent, or a jump in Δv."""
        if 1.0 not in self.data:
            return False
        t = self.job.target
        best = self.best()
        if t >= self.data[1.0][0] or abs(self.data[best][0] - t) <= self.tol or self.rounds >= ROUNDS:
            self.done = True
        else:
            xs, dv = self.curve()
            a, b = _bracket(xs, dv, t)
            self.done = float(xs[b]) - float(xs[a]) < 1e-7  # a jump: the closer side is the best this image allows
        return self.done

    def propose(self) -> float | None:
        """The next coordinate of a search that is not :meth:`finished`, or None when nothing new is left."""
        if 1.0 not in self.data:  # first round: s = 1, this image's reach
            return 1.0
        xs, dv = self.curve()
        a, b = _bracket(xs, dv, self.job.target)
        lo_x, hi_x = float(xs[a]), float(xs[b])
        x = _guess(xs, dv, a, b, self.job.target)
        self.stalls = self.stalls + 1 if hi_x - lo_x > 0.5 * self.span else 0
        if self.stalls >= STALLS:  # the bracket has not halved for a while: one end does not move, bisect towards it
            x = 0.5 * (x + (hi_x if x - lo_x < hi_x - x else lo_x))
            self.stalls = 0
        self.span = hi_x - lo_x
        self.rounds += 1
        eps = 1e-3 * (hi_x - lo_x)
        x = min(max(x, lo_x + eps), hi_x - eps)
        return None if x in self.data else x

    def outcome(self) -> Outcome:
        x = self.best()
        _, vif_best, image = self.data[x]
        reach = (0.0, self.data[1.0][0])
        strength = self.job.domain.strength(x)
        dv = float(delta_v_of(vif_best))
        return Outcome(image, strength, vif_best, dv, self.job.target, reach, self.evaluations, self.rounds)


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
    from scipy.interpolate import PchipInterpolator  # ~0.3 CPU-s to import: not at `corruptgen list`

    values = PchipInterpolator(x_k, y_k)(grid)
    return float(grid[int(np.argmin(np.abs(values - target)))])


def search_samples(jobs: list[Job], scorer: Scorer, *, tol: float = TOL) -> list[Outcome]:
    """Search the samples of one group together: every round scores one candidate per member still searching in one
    VIF batch (member i against reference row i of ``scorer``). The rounds, and so every result, are a function of
    the group alone, never of how a build batches or schedules groups."""
    states = [_Search(job, tol) for job in jobs]
    while True:
        requests: list[tuple[int, float]] = []
        for i, st in enumerate(states):
            if st.done or st.finished():
                continue
            x = st.propose()
            st.done = x is None  # nothing new left to measure in its bracket
            if x is not None:
                requests.append((i, x))
        if not requests:
            return [st.outcome() for st in states]
        images = [states[i].job.domain.apply(states[i].job.image, states[i].job.domain.strength(x),
                                             states[i].job.fld) for i, x in requests]  # fmt: skip
        raw = scorer.raw(images, [i for i, _ in requests])
        for (i, x), r, v, im in zip(requests, raw, quantize(raw), images, strict=True):
            states[i].record(x, v, r, im)


def find_strength(
    domain: Domain, image: np.ndarray, fld: dict, scorer: Scorer, v: float, *, tol: float = TOL
) -> Outcome:
    """Strength whose stored Δv is closest to the target ``t = v``: a group of one (see :func:`search_samples`)."""
    return search_samples([Job(domain, image, fld, float(v))], scorer, tol=tol)[0]


def sample_strength(domain: Domain, u: float) -> float:
    """The paper's uniform-parameter sampling (Alg. 1, ``c ~ Uniform(C)``): s = u."""
    return float(u)

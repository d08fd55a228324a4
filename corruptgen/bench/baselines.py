"""The baselines of issues A–E: the straightforward code each corruptgen stage is measured against.

Shared by ``corruptgen bench`` (:mod:`corruptgen.bench.stages`) and the stand-alone ``scripts/bench_*.py``:

* A (Syn2Nat): :func:`syn2nat_bare` (the corruption functions in a bare loop over pre-decoded images) and
  :func:`syn2nat_bare_io` (the same plus decode + preprocess of each input and JPEG encode of each output);
* B (ImageNet-C): :func:`imagenet_c_reference`, the per-image NumPy transcription of hendrycks/robustness in
  ``tests/corruptions/imagenet_c_reference.py`` (a source checkout only; ``None`` when it is not there);
* C (VCR): :func:`vif_numpy`, a plain single-image NumPy VIF on a ``pyrtools`` steerable pyramid
  (:func:`pyramid_pyrtools`; ``pyrtools`` is a bench dependency, :func:`pyramid_scipy` is a labelled fallback);
* D (OpticsBench): :func:`conv2d_loop`, the reference generator's per-image, per-channel ``F.conv2d``;
* E (eval): :func:`bare_forward`, the model's forward pass over pre-normalised batches.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

PYRTOOLS_MISSING = "baseline unavailable (pip install pyrtools)"
REFERENCE_MISSING = "baseline unavailable (tests/corruptions/imagenet_c_reference.py: needs a source checkout)"
IMAGENET_C_REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "corruptions" / "imagenet_c_reference.py"


# ------------------------------------------------------------------------------------------------ A: Syn2Nat


def syn2nat_bare(plan, images: Sequence[np.ndarray], keys: Sequence[str]) -> float:
    """Seconds of the plan's corruption functions in a bare loop over pre-decoded, preprocessed images."""
    from ..corruptions import get
    from ..seeding import sample_rng

    fns = [(s.name, get(s.corruption)) for s in plan.subsets if s.corruption]
    t0 = time.perf_counter()
    for name, corruption in fns:
        for key, image in zip(keys, images, strict=True):
            _, rng = sample_rng(plan.seed, plan.benchmark, name, key)
            corruption.fn(image, rng)
    return time.perf_counter() - t0


def syn2nat_bare_io(plan, paths: Sequence[Path], quality: int = 85) -> float:
    """Seconds of :func:`syn2nat_bare` plus decoding + preprocessing each input file once (PIL) and JPEG-encoding
    each output: what any script writing the benchmark must do, without shards, metadata or manifest."""
    from PIL import Image

    from ..corruptions import get
    from ..io.codec import encode_image
    from ..seeding import sample_rng

    fns = [(s.name, get(s.corruption)) for s in plan.subsets if s.corruption]
    t0 = time.perf_counter()
    for path in paths:
        image = plan.preprocess(np.asarray(Image.open(path).convert("RGB")))
        for name, corruption in fns:
            _, rng = sample_rng(plan.seed, plan.benchmark, name, Path(path).stem)
            encode_image(corruption.fn(image, rng)[0], "jpg", quality)
    return time.perf_counter() - t0


# ------------------------------------------------------------------------------------------------ B: ImageNet-C


def imagenet_c_reference() -> ModuleType | None:
    """The reference transcription module (``tests/corruptions/imagenet_c_reference.py``), or ``None`` when this is
    not a source checkout."""
    if not IMAGENET_C_REFERENCE.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_corruptgen_imagenet_c_reference", IMAGENET_C_REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def imagenet_c_reference_fn(ref: ModuleType, name: str) -> Callable[[np.ndarray, np.random.Generator, int], Any]:
    """The reference function of ``name`` as benchmarked (glass blur: the literal per-pixel loop with one draw per
    visit, as ``make_imagenet_c.py`` runs it)."""
    if name == "glass_blur":
        return lambda img, rng, s: ref.glass_blur(img, rng, s, per_pixel_draws=True)
    return ref.REFERENCE[name]


# ------------------------------------------------------------------------------------------------ C: VCR / VIF


def pyrtools_available() -> bool:
    try:
        import pyrtools  # noqa: F401
    except ImportError:
        return False
    return True


def pyramid_pyrtools(img: np.ndarray) -> dict:
    """pyrtools' 4-level, 6-orientation steerable pyramid (sp5, reflect1 edges): the code VCR's toolbox runs."""
    import pyrtools

    return pyrtools.pyramids.SteerablePyramidSpace(img, height=4, order=5, edge_type="reflect1").pyr_coeffs


def pyramid_scipy(img: np.ndarray) -> dict:
    """Own single-image sp5 pyramid with scipy.ndimage (mode 'mirror' = pyrtools' reflect1); a fallback only."""
    from scipy.ndimage import correlate

    from ..quality.steerable import sp5_filters

    f = {k: v.numpy() for k, v in sp5_filters().items()}
    out = {}
    lo = correlate(img, f["lo0"], mode="mirror")
    for level in range(4):
        for b in range(6):
            out[(level, b)] = correlate(lo, f["bands"][b], mode="mirror")
        lo = correlate(lo, f["lo"], mode="mirror")[::2, ::2]
    return out


def vif_numpy(ref: np.ndarray, dist: np.ndarray, pyramid: Callable[[np.ndarray], dict] = pyramid_pyrtools) -> float:
    """Single-image NumPy VIF of two gray images, the variant of the VCR code (``vif_utils.vif``), written plainly."""
    m, sigma_nsq, tol = 3, 0.1, 1e-15
    pr, pd = pyramid(ref.astype(np.float64)), pyramid(dist.astype(np.float64))
    keys = [(level, b) for level in range(4) for b in (0, 3)][::-1]
    nums, dens = [], []
    for i, key in enumerate(keys):
        x, y = pr[key], pd[key]
        h, w = x.shape[0] // m * m, x.shape[1] // m * m
        x, y = x[:h, :w], y[:h, :w]
        k = 2 ** int(np.ceil((i + 1) / 2)) + 1
        p = (k - m) // 2
        xp, yp = np.pad(x, p, mode="reflect"), np.pad(y, p, mode="reflect")

        def box(a, k=k):
            c = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
            c[1:, 1:] = a.cumsum(0).cumsum(1)
            return (c[:-k:m, :-k:m] - c[:-k:m, k::m] - c[k::m, :-k:m] + c[k::m, k::m]) / (k * k)

        mx, my = box(xp), box(yp)
        vx, vy, cxy = box(xp * xp) - mx * mx, box(yp * yp) - my * my, box(xp * yp) - mx * my
        bad = (vx < 0) | (vy < 0)
        vx[vx < 0] = 0
        vy[vy < 0] = 0
        cxy[bad] = 0
        g = cxy / (vx + tol)
        sv = vy - g * cxy
        sel = vx < tol
        g[sel], sv[sel] = 0, vy[sel]
        sel = vy < tol
        g[sel], sv[sel] = 0, 0
        sel = g < 0
        sv[sel], g[sel] = vy[sel], 0
        sv = np.maximum(sv, tol)
        patches = np.lib.stride_tricks.sliding_window_view(x, (m, m)).reshape(-1, m * m).T
        lam, vec = np.linalg.eigh(np.cov(patches))
        lam = np.maximum(lam, tol)
        cov = vec @ np.diag(lam) @ vec.T
        blocks = x.reshape(h // m, m, w // m, m).transpose(0, 2, 1, 3).reshape(-1, m * m).T
        s = ((np.linalg.inv(cov) @ blocks) * blocks).sum(0).reshape(h // m, w // m) / (m * m)
        o = int(np.ceil((k - 1) / 2 / m))
        g, sv, s = g[o:-o, o:-o], sv[o:-o, o:-o], s[o:-o, o:-o]
        nums.append(sum(np.mean(np.log(1 + g * g * s * lj / (sv + sigma_nsq))) for lj in lam))
        dens.append(sum(np.mean(np.log(1 + s * lj / sigma_nsq)) for lj in lam))
    return float(np.mean(np.array(nums) + 1e-4) / np.mean(np.array(dens) + 1e-4))


def gray(rgb: np.ndarray) -> np.ndarray:
    """OpenCV's RGB → gray (what VIF scores)."""
    import cv2

    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


# ------------------------------------------------------------------------------------------------ D: OpticsBench


def conv2d_loop(x, kernels):
    """The reference generator's approach: one ``F.conv2d`` per image and colour channel (zero 'same' padding).

    ``x``: (N, 3, H, W) float tensor; ``kernels``: (N, 3, K, K) per-image kernels."""
    import torch
    import torch.nn.functional as F

    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[i, c : c + 1] = F.conv2d(x[i : i + 1, c : c + 1], kernels[i, c][None, None], padding="same")[0]
    return out


def conv2d_loop_work(x, kernels, sync=None):
    """One unit of baseline D for :func:`~corruptgen.bench.timing.time_work`: :func:`conv2d_loop` on the next image
    of ``x`` (cycling) with its kernels; returns 1. ``corruptgen bench`` and ``scripts/bench_optics.py`` time this.

    One image per unit (not the whole batch): on CPUs where oneDNN has no vectorised kernel for a 1-channel 25x25
    convolution (its ``ref:any`` fallback, e.g. AVX2-only CPUs) one image takes seconds."""
    state = {"next": 0}

    def work() -> int:
        i = state["next"] % x.shape[0]
        state["next"] += 1
        conv2d_loop(x[i : i + 1], kernels[i : i + 1])
        if sync is not None:
            sync()
        return 1

    return work


# ------------------------------------------------------------------------------------------------ E: eval


def decoded_build_images(build: str | Path, size: int | None = None, limit: int | None = None) -> list[np.ndarray]:
    """Every image of a build (the first ``limit`` per subset), decoded in the order ``corruptgen eval`` reads them."""
    from ..eval.data import decode_image, iter_samples, open_source, subset_dataset

    src = open_source(build)
    out = []
    for sd in src.select(None):
        ds, imgs = subset_dataset(sd, True)
        for sample in iter_samples(sd, ds, imgs, limit=limit):
            out.extend(decode_image(b) for b in sample.frames)
    if size is not None and not all(im.shape[:2] == (size, size) for im in out):
        raise ValueError(f"build images are not all {size}x{size}")
    return out


def normalised_batches(images: Sequence[np.ndarray], model, batch_size: int, device: str) -> list:
    """Float batches (N, 3, H, W), normalised with the model's mean and std, on ``device``."""
    import torch

    mean = torch.tensor(model.mean).view(1, 3, 1, 1)
    std = torch.tensor(model.std).view(1, 3, 1, 1)
    return [
        ((torch.from_numpy(np.stack(images[i : i + batch_size])).permute(0, 3, 1, 2).float() / 255 - mean) / std)
        .contiguous()
        .to(device)
        for i in range(0, len(images), batch_size)
    ]


def bare_forward(forward: Callable, batches: Sequence, device: str = "cpu") -> float:
    """Seconds of the bare forward loop (argmax to the CPU) over pre-normalised batches."""
    import torch

    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    sync()
    t0 = time.perf_counter()
    with torch.inference_mode():
        for x in batches:
            forward(x).argmax(1).cpu()
    sync()
    return time.perf_counter() - t0

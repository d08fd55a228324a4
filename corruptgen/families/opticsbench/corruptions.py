"""OpticsBench corruptions (Müller, Braun, Keuper, ICCVW 2023): blur by optical-aberration PSF kernels.

Each corruption is a pair of Zernike fringe modes (Müller et al., ICCVW 2023, Table 2); every image gets ONE of
the two single-mode RGB kernels of a stack (the two are never added), at a fixed severity. Kernels are applied as the
reference generator ``generate_datasets.py`` does: per-channel ``F.conv2d`` cross-correlation (kernel not flipped)
with zero ``'same'`` padding, on the [0, 1] float image, clipped. ``defocus_disk`` is the ImageNet-C ``defocus_blur``
disk the paper compares against (``make_imagenet_c.py``).

Numerics: the convolution runs in float64 (FFT, :mod:`.render`), so the bytes do not depend on the device, batch
size, FFT library or path (float32 noise, ~1e-6, would flip the pixels that lie near a rounding boundary, e.g. between
CPU and GPU).
Quantisation to uint8:

* ``quantize="round"`` (default): ``round(255 · clip(y, 0, 1))``, exact ties up.
* ``quantize="truncate"`` (``--compat iccvw2023``): the reference's float32 pipeline — input ``float32(v) / 255``
  (``ToTensor``), the exact convolution rounded to float32, ``clip``, ``mul(255)`` in float32 and truncation
  (``ToPILImage``'s ``.byte()``). It matches the reference's own ``conv2d`` output on ≥ 99.99 % of pixels (the rest is
  the reference's float32 accumulation noise at integer boundaries). Truncation darkens by 0.5 grey levels on
  average and maps 68 % of the flat-region pixels to ``v − 1`` — a quirk of the reference, reproduced on purpose.
  For ``defocus_disk`` it is ImageNet-C's own ``cv2.filter2D`` + ``np.uint8(255 · clip(y, 0, 1))`` (exact bytes).

Kernel stacks (``kernels=``): ``"opticsbench"`` / ``"opticsbench_rg"`` (``kernels/*.npz`` written by
``scripts/make_kernels.py``) or a path to an ``.npz`` or a published ``.pt`` (read without unpickling); loaded once
per process and cached by path.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...corruptions.registry import Corruption, Params, register
from ...errors import CorruptgenError
from .render import blur_uint8
from .zernike import FRINGE, PAIRS

FAMILY = "optics"
CITE = "Müller, Braun, Keuper, Classification robustness to common optical aberrations, ICCVW 2023 (arXiv:2308.15499)"
CITE_DISK = "Hendrycks & Dietterich, ICLR 2019 (ImageNet-C defocus_blur, make_imagenet_c.py), as OpticsBench's baseline"
#: The four OpticsBench corruptions, paper Table 2 (fringe indices of the two kernels).
CORRUPTIONS: tuple[str, ...] = ("astigmatism", "coma", "defocus_spherical", "trefoil")
SEVERITIES = (1, 2, 3, 4, 5)
#: Built-in stacks (files in ``kernels/``, written by ``scripts/make_kernels.py``).
BUILTIN_STACKS = {"opticsbench": "opticsbench.npz", "opticsbench_rg": "opticsbench_rg.npz"}
QUANTIZE = ("round", "truncate")
CHOICES = ("rng", "iccvw2023")
#: ImageNet-C defocus_blur severities (radius px, alias blur σ) of ``make_imagenet_c.py``.
DISK_SEVERITIES = ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5))

#: Mode choice of the paper-era generator (v1.0, batch 128): ``random.seed(0)`` then 128 ×
#: ``random.choice(pair)``, reused for every batch and every (corruption, severity); 1 = the pair's second mode.
ICCVW2023_BATCH = 128
ICCVW2023_PATTERN = (
    "1101111110010010100110111011100010110100000100110110101101101000"
    "0110000001100111110101100010010110000000000101000000100010100011"
)


def iccvw2023_pattern(batch_size: int = ICCVW2023_BATCH) -> list[int]:
    """Recompute the reference's choice pattern with CPython's ``random`` (version-2 seeding, ``choice`` of 2)."""
    r = random.Random(0)
    return [r.choice((0, 1)) for _ in range(batch_size)]


# ---------------------------------------------------------------- kernel stacks


def kernels_dir() -> Path:
    """The built-in stacks: ``kernels/`` (package data, installed with the wheel)."""
    from importlib import resources

    return Path(str(resources.files("corruptgen.kernels")))


def resolve_kernels(spec: str | None, default: str = "opticsbench") -> tuple[str, Path]:
    """(option value, file path) for a built-in stack id or a path; a missing file is a :class:`CorruptgenError`.

    Built-in ids stay ids in the plan (portable across checkouts); paths are made absolute.
    """
    spec = default if spec is None or str(spec) == "" else str(spec)
    if spec in BUILTIN_STACKS:
        path = kernels_dir() / BUILTIN_STACKS[spec]
        if not path.is_file():
            raise CorruptgenError(
                f"kernel stack {spec!r} not found at {path}; run `python scripts/make_kernels.py` or pass "
                "--kernels <published kernel_stack_iccvw.pt>"
            )
        return spec, path
    path = Path(spec).expanduser().resolve()
    if not path.is_file():
        raise CorruptgenError(f"--kernels: no such kernel stack file: {spec}")
    return str(path), path


@functools.lru_cache(maxsize=8)
def _load_stack(path: str) -> tuple[np.ndarray, dict]:
    from .kernelio import load_kernels

    arr, meta = load_kernels(path)
    modes = [int(m) for m in meta.get("modes", range(4, 4 + arr.shape[0]))]
    missing = sorted({j for pair in PAIRS.values() for j in pair} - set(modes))
    if missing:
        raise CorruptgenError(f"{path}: kernel stack lacks fringe modes {missing} (has {modes})")
    if arr.shape[1] < len(SEVERITIES):
        raise CorruptgenError(f"{path}: kernel stack has {arr.shape[1]} severities, OpticsBench needs 5")
    meta = {**meta, "modes": modes}
    return arr, meta


def load_stack(spec: str | None, expected_sha256: str | None = None) -> tuple[np.ndarray, dict]:
    """The stack (float32 (M, S, 3, K, K)) and its metadata, cached per process; ``meta["source"]`` is a short label.

    ``expected_sha256`` (the value recorded in the plan) guards against a stack that changed after planning.
    """
    option, path = resolve_kernels(spec)
    arr, meta = _load_stack(str(path))
    if expected_sha256 and meta["sha256"] != expected_sha256:
        raise CorruptgenError(f"kernel stack {path} changed since the plan was made (sha256 {meta['sha256'][:12]}…, "
                              f"plan has {expected_sha256[:12]}…)")  # fmt: skip
    source = meta.get("published") or (option if option in BUILTIN_STACKS else path.name)
    return arr, {**meta, "source": source, "option": option}


@functools.lru_cache(maxsize=16)
def _stack_tensor(path: str, device: str):
    import torch

    arr, _ = _load_stack(path)
    return torch.from_numpy(arr).to(device=device, dtype=torch.float64)


# ---------------------------------------------------------------- rendering


def _check_options(severity: int, quantize: str, choice: str = "rng") -> int:
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of 1..5, got {severity!r}")
    if quantize not in QUANTIZE:
        raise ValueError(f"quantize must be one of {', '.join(QUANTIZE)}, got {quantize!r}")
    if choice not in CHOICES:
        raise ValueError(f"choice must be one of {', '.join(CHOICES)}, got {choice!r}")
    return int(severity)


_FIXED = {"severity", "kernels", "kernels_sha256", "padding", "quantize", "choice"}
_PADDINGS = ("zero", "reflect")


def _check_fixed(options: Mapping[str, Any], allowed: frozenset[str] = frozenset(_FIXED)) -> None:
    """A subset's fixed options (checked when the plan is made; the kernel stack must load)."""
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown options {unknown}; known: {', '.join(sorted(allowed))}")
    _check_options(options.get("severity", 3), options.get("quantize", "round"), options.get("choice", "rng"))
    if options.get("padding", "zero") not in _PADDINGS:
        raise ValueError(f"padding must be one of {', '.join(_PADDINGS)}, got {options['padding']!r}")
    if "kernels" in allowed:
        load_stack(options.get("kernels"), options.get("kernels_sha256"))


def _optics_batch(name: str):
    pair = PAIRS[name]

    def batch_fn(
        images: np.ndarray,
        rngs: Sequence[np.random.Generator],
        *,
        device: str = "cpu",
        severity: int = 3,
        kernels: str | None = None,
        kernels_sha256: str | None = None,
        padding: str = "zero",
        quantize: str = "round",
        choice: str = "rng",
        sample_indices: Sequence[int] | None = None,
    ) -> tuple[np.ndarray, list[Params]]:
        severity = _check_options(severity, quantize, choice)
        if len(rngs) != len(images):
            raise ValueError(f"{len(images)} images but {len(rngs)} generators")
        _, meta = load_stack(kernels, kernels_sha256)
        # one draw per image, always (the draw count must not depend on the choice mode)
        picks = [int(rng.integers(2)) for rng in rngs]
        how = "rng"
        if choice == "iccvw2023":
            if sample_indices is not None:
                picks = [int(ICCVW2023_PATTERN[int(i) % ICCVW2023_BATCH]) for i in sample_indices]
                how = "iccvw2023"
            else:
                how = "rng (iccvw2023 pattern needs the sample index)"
        fringes = [pair[p] for p in picks]
        index = [meta["modes"].index(j) for j in fringes]
        table = _stack_tensor(str(Path(meta["path"])), str(device))
        rows = sorted(set(index))
        # a basic index, then the rows: one copy of the few kernels (a list index beside an integer one costs ms on
        # the CPU: torch parallelises that gather over its thread pool)
        out = blur_uint8(images, table[:, severity - 1][rows], [rows.index(i) for i in index], padding=padding,
                         quantize=quantize, device=str(device), reference_float32=True)  # fmt: skip
        params = [
            {
                "fringe_mode": j,
                "aberration": FRINGE[j].name.replace(" ", "_"),  # paper Table 1
                "stack_index": i,
                "severity": severity,
                "kernels": meta["source"],
                "kernels_sha256": meta["sha256"],
                "padding": padding,
                "quantize": quantize,
                "choice": how,
            }
            for j, i in zip(fringes, index, strict=True)
        ]
        return out, params

    def fn(image: np.ndarray, rng: np.random.Generator, *, sample_index: int | None = None, **options: Any):
        indices = None if sample_index is None else [sample_index]
        out, params = batch_fn(image[None], [rng], device="cpu", sample_indices=indices, **options)
        return out[0], params[0]

    return fn, batch_fn


@functools.lru_cache(maxsize=8)
def disk_kernel(severity: int) -> np.ndarray:
    """ImageNet-C defocus disk of ``severity`` (float32, 17×17 or 21×21; ``make_imagenet_c.py``)."""
    from .psf import imagenet_c_disk

    radius, blur = DISK_SEVERITIES[severity - 1]
    return imagenet_c_disk(radius, blur)


def _disk_batch(
    images: np.ndarray,
    rngs: Sequence[np.random.Generator],
    *,
    device: str = "cpu",
    severity: int = 1,
    padding: str = "reflect",
    quantize: str = "round",
    **_: Any,
) -> tuple[np.ndarray, list[Params]]:
    import torch

    severity = _check_options(severity, quantize)
    kernel = disk_kernel(severity)
    if quantize == "truncate" and padding == "reflect":
        # ImageNet-C's exact bytes: cv2.filter2D on x / 255 in float64 (reflect-101), np.uint8 truncation. Exact
        # integers are frequent here (1/29 disk weights), so only the reference's own arithmetic gives its bytes.
        out = np.stack([np.clip(cv2.filter2D(im / 255.0, -1, kernel), 0, 1) * 255 for im in images]).astype(np.uint8)
    else:
        k = torch.from_numpy(kernel).to(device=device, dtype=torch.float64).expand(3, -1, -1)
        out = blur_uint8(images, k.contiguous(), padding=padding, quantize=quantize, device=str(device),
                         reference_float32=False)  # fmt: skip
    radius, blur = DISK_SEVERITIES[severity - 1]
    params = {"radius": radius, "alias_blur": blur, "kernel_size": int(kernel.shape[-1]), "severity": severity,
              "padding": padding, "quantize": quantize}  # fmt: skip
    return out, [dict(params) for _ in range(len(images))]


def _disk_fn(image: np.ndarray, rng: np.random.Generator, **options: Any) -> tuple[np.ndarray, Params]:
    out, params = _disk_batch(image[None], [rng], device="cpu", **options)
    return out[0], params[0]


def _register_all() -> None:
    for name in CORRUPTIONS:
        fn, batch_fn = _optics_batch(name)
        a, b = PAIRS[name]
        register(
            Corruption(
                name=name,
                family=FAMILY,
                fn=fn,
                batch_fn=batch_fn,
                params={
                    "modes": [f"Z{a}", f"Z{b}"],
                    "severity": list(SEVERITIES),
                    "kernel_size": 25,
                    "padding": "zero",
                    "choice": "one of the two kernels per image",
                },
                cite=CITE,
                reference="opticsbench generate_datasets.py (v1.0): F.conv2d per channel, padding='same'",
                fidelity="same kernels and convolution; float64 FFT; round (default) or reference truncation",
                context=("sample_index",),
                check=_check_fixed,
            )
        )
    register(
        Corruption(
            name="defocus_disk",
            family=FAMILY,
            fn=_disk_fn,
            batch_fn=_disk_batch,
            params={"radius_alias_blur": [list(s) for s in DISK_SEVERITIES], "padding": "reflect"},
            cite=CITE_DISK,
            reference="make_imagenet_c.py defocus_blur: cv2.filter2D(x, -1, disk(radius, alias_blur))",
            fidelity="same disk kernel; reflect-101 border; float64 FFT",
            check=functools.partial(_check_fixed, allowed=frozenset({"severity", "padding", "quantize"})),
        )
    )


_register_all()

"""``corruptgen vif CLEAN CORRUPTED [--pixel]``: VIF and VCR's perceived change Δv of one image pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import CorruptgenError


def add_commands(sub) -> dict:
    p = sub.add_parser(
        "vif",
        help="VIF (VCR's steerable-pyramid variant) and delta_v = max(0, 1 - VIF) of a clean/corrupted pair",
        description="Prints the visual information fidelity of CORRUPTED against CLEAN and VCR's perceived change "
        "delta_v = max(0, 1 - VIF), one per line. Both images must have the same size (at least 72x72 px); colour "
        "images are converted to gray like OpenCV's RGB2GRAY.",
    )
    p.add_argument("clean", help="reference image file")
    p.add_argument("corrupted", help="distorted image file")
    p.add_argument("--pixel", action="store_true", help="pixel-domain VIF-P (sewar/Sheikh) instead: NOT VCR's VIF")
    p.add_argument("--float32", action="store_true", help="compute in float32 (faster, ~1e-4 from float64)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    return {"vif": _cmd_vif}


def _read(path: str, role: str) -> np.ndarray:
    from ..io.decode import BadImageError, decode_image

    file = Path(path)
    if not file.exists():
        raise CorruptgenError(f"{role} image not found: {path}")
    if not file.is_file():
        raise CorruptgenError(f"{role} image is not a file: {path}")
    try:
        image, _ = decode_image(file.read_bytes())
    except BadImageError as e:
        raise CorruptgenError(f"cannot read {role} image {path}: {e.reason}") from None
    return image


def _cmd_vif(args) -> int:
    import torch

    from .steerable import MIN_SIZE
    from .vif import vif, vif_p

    clean, corrupted = _read(args.clean, "clean"), _read(args.corrupted, "corrupted")
    if clean.shape != corrupted.shape:
        (h0, w0), (h1, w1) = clean.shape[:2], corrupted.shape[:2]
        raise CorruptgenError(f"size mismatch: clean image is {w0}x{h0}, corrupted image is {w1}x{h1} (WxH)")
    min_side = 41 if args.pixel else MIN_SIZE
    if min(clean.shape[:2]) < min_side:
        h, w = clean.shape[:2]
        raise CorruptgenError(
            f"images are {w}x{h}; VIF{'-P' if args.pixel else ''} needs at least {min_side} px a side"
        )
    try:
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise CorruptgenError("--device cuda requested but CUDA is not available")
    except RuntimeError as e:
        raise CorruptgenError(f"bad --device {args.device!r}: {e}") from None
    dtype = torch.float32 if args.float32 else torch.float64
    measure = vif_p if args.pixel else vif
    value = measure(clean, corrupted, device=device, dtype=dtype)
    print(f"{'VIF-P' if args.pixel else 'VIF'}: {value:.6f}")
    print(f"delta_v: {max(0.0, 1.0 - value):.6f}")
    return 0

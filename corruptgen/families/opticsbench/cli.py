"""``corruptgen kernels show|compare``: inspect and compare PSF kernel stacks (.npz or the published .pt)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...commands import register_commands

CHANNELS = "RGB"


@register_commands("kernels")
def add_commands(sub) -> dict:
    """Register ``kernels`` with its ``show`` and ``compare`` actions on the main CLI's subparsers."""
    p = sub.add_parser("kernels", help="show or compare PSF kernel stacks (OpticsBench .npz or published .pt)")
    actions = p.add_subparsers(dest="kernels_action", required=True, metavar="ACTION")
    s = actions.add_parser("show", help="print RMS radius / MTF50 per kernel; --out writes a PNG gallery")
    s.add_argument("stack", help="kernel stack: .npz (corruptgen) or published .pt (read without unpickling)")
    s.add_argument("--out", default=None, help="write a PNG gallery (rows: modes, columns: severities)")
    s.add_argument("--scale", type=int, default=8, help="gallery pixels per kernel pixel (default 8)")
    s.add_argument("--gamma", type=float, default=0.5, help="display gamma of the gallery (default 0.5)")
    c = actions.add_parser("compare", help="per-kernel L1, RMS-radius ratio and centroid shift of A against B")
    c.add_argument("a", help="kernel stack A")
    c.add_argument("b", help="kernel stack B (the reference)")
    c.add_argument("--worst", type=int, default=5, help="list the N kernels with the largest L1 (default 5)")
    c.add_argument("--json", action="store_true", help="print the full comparison as JSON")
    return {"kernels": _cmd_kernels}


def _cmd_kernels(args) -> int:
    return _show(args) if args.kernels_action == "show" else _compare(args)


def _labels(meta: dict) -> list[str]:
    from .zernike import FRINGE, mode_label

    if "labels" in meta:
        return list(meta["labels"])
    return [mode_label(j) if j in FRINGE else f"mode {j}" for j in meta["modes"]]


def _show(args) -> int:
    from .kernelio import load_kernels
    from .stats import centroid_direction, mtf50, rms_radius

    kernels, meta = load_kernels(args.stack)
    labels = _labels(meta)
    rms, m50, dirs = rms_radius(kernels), mtf50(kernels), centroid_direction(kernels)
    sums = kernels.sum(axis=(-1, -2))
    print(f"{meta['path']}: {meta['format']}, shape {tuple(kernels.shape)}, sha256 {meta['sha256'][:16]}…")
    print(f"sum per kernel {sums.min():.6f}..{sums.max():.6f}, min {kernels.min():.3g}, max {kernels.max():.4f}")
    head = "RMS radius px (R G B)    MTF50 cyc/px (R G B)     centroid dir"
    print(f"{'mode':26} sev  {head}")
    for m, label in enumerate(labels):
        for s, sev in enumerate(meta["severities"]):
            r = " ".join(f"{v:5.2f}" for v in rms[m, s])
            f = " ".join(f"{v:6.3f}" for v in m50[m, s])
            d = " ".join(f"{v:2s}" for v in dirs[m, s])
            print(f"{label[:26]:26} {sev:3d}  {r}        {f}     {d}")
    if args.out:
        path = write_gallery(kernels, labels, meta["severities"], args.out, scale=args.scale, gamma=args.gamma)
        print(f"wrote {path}")
    return 0


def _compare(args) -> int:
    from .kernelio import load_kernels
    from .stats import compare_stacks, validation_summary, worst_kernels

    a, meta_a = load_kernels(args.a)
    b, meta_b = load_kernels(args.b)
    if a.shape[1] != b.shape[1] or (a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0])):
        from ...errors import CorruptgenError

        raise CorruptgenError(f"cannot compare stacks of shapes {tuple(a.shape)} and {tuple(b.shape)}")
    cmp = compare_stacks(a, b)
    meta = meta_a if a.shape[0] >= b.shape[0] else meta_b
    labels = _labels(meta)
    summary = validation_summary(cmp)
    worst = worst_kernels(cmp, args.worst, modes=meta["modes"])
    if args.json:
        payload = {
            "a": {"path": meta_a["path"], "sha256": meta_a["sha256"]},
            "b": {"path": meta_b["path"], "sha256": meta_b["sha256"]},
            "summary": summary,
            "worst": worst,
            **{k: np.asarray(v).tolist() for k, v in cmp.items()},
        }
        print(json.dumps(payload, indent=1))
        return 0
    print(f"A {meta_a['path']} vs B {meta_b['path']}")
    print(f"{'mode':26} sev  L1 (R G B)            RMS ratio A/B (R G B)   centroid shift px (R G B)")
    for m, label in enumerate(labels):
        for s, sev in enumerate(meta["severities"]):
            l1 = " ".join(f"{v:6.3f}" for v in cmp["l1"][m, s])
            ratio = " ".join(f"{v:6.3f}" for v in cmp["rms_ratio"][m, s])
            shift = " ".join(f"{v:5.2f}" for v in cmp["centroid_shift"][m, s])
            print(f"{label[:26]:26} {sev:3d}  {l1}    {ratio}    {shift}")
    print(
        f"summary: {summary['kernels']} kernels, L1 mean {summary['l1_mean']:.4f} max {summary['l1_max']:.4f}, "
        f"RMS ratio {summary['rms_ratio_min']:.3f}..{summary['rms_ratio_max']:.3f}, "
        f"max centroid shift {summary['centroid_shift_max_px']:.3f} px, "
        f"direction mismatches {summary['direction_mismatches']}"
    )
    print("worst kernels by L1:")
    for row in worst:
        print(
            f"  {labels[row['index']]} sev {row['severity']} {row['channel']}: L1 {row['l1']:.4f}, "
            f"RMS ratio {row['rms_ratio']:.3f}, centroid shift {row['centroid_shift_px']:.3f} px, "
            f"direction {row['direction']}"
        )
    return 0


def write_gallery(
    kernels: np.ndarray,
    labels: list[str],
    severities,
    out: str | Path,
    *,
    scale: int = 8,
    gamma: float = 0.5,
) -> Path:
    """PNG gallery with PIL: one RGB tile per (mode, severity), each scaled to its own maximum, then ``**gamma``."""
    from PIL import Image, ImageDraw

    from ...errors import CorruptgenError

    if scale < 1 or gamma <= 0:
        raise CorruptgenError("--scale must be >= 1 and --gamma > 0")
    k = np.clip(np.asarray(kernels, np.float64), 0, None)
    peak = k.max(axis=(-3, -2, -1), keepdims=True)
    tiles = (np.divide(k, peak, out=np.zeros_like(k), where=peak > 0) ** gamma * 255).round().astype(np.uint8)
    tiles = np.moveaxis(tiles, 2, -1).repeat(scale, axis=-3).repeat(scale, axis=-2)  # (M, S, H, W, 3)
    n_modes, n_sev, th, tw, _ = tiles.shape
    gap, left, top = 4, 170, 22
    canvas = np.full((top + n_modes * (th + gap), left + n_sev * (tw + gap), 3), 255, np.uint8)
    rows = top + np.arange(n_modes) * (th + gap)
    cols = left + np.arange(n_sev) * (tw + gap)
    for m in range(n_modes):  # loop over tiles only (vectorised inside)
        for s in range(n_sev):
            canvas[rows[m] : rows[m] + th, cols[s] : cols[s] + tw] = tiles[m, s]
    image = Image.fromarray(canvas)
    draw = ImageDraw.Draw(image)
    for s, sev in enumerate(severities):
        draw.text((int(cols[s]) + tw // 2 - 20, 5), f"severity {sev}", fill=(0, 0, 0))
    for m, label in enumerate(labels):
        draw.text((6, int(rows[m]) + th // 2 - 6), label[:26], fill=(0, 0, 0))
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path

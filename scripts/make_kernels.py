"""Regenerate the OpticsBench PSF kernel stacks from physics (prysm 0.21.1) and validate them.

Writes, deterministically (same bytes on rerun in the same environment):

In ``kernels/``:

* ``opticsbench.npz``     (8, 5, 3, 25, 25) float32 — reproduces ``kernel_stack_iccvw.pt``
* ``opticsbench_rg.npz``  (8, 5, 3, 25, 25) float32 — reproduces ``kernel_stack_rg_iccvw.pt``
* ``defocus_disk.npz``    (1, 5, 3, 21, 21) float32 — ImageNet-C defocus disks (grey, zero-padded)
* ``opticsbench.json``    provenance: every parameter, coefficients, sha256s and the validation summary

Validation against the published stacks (the ``kernel_stack_*.pt`` files of the OpticsBench release) runs when
``--reference DIR`` holds them; they are read without unpickling and never copied.

Usage: ``python scripts/make_kernels.py [--out kernels] [--reference DIR]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from corruptgen.families.opticsbench import _prysm, kernelio, psf, stats, zernike  # noqa: E402

CITE = (
    "Müller, Braun, Keuper: Classification robustness to common optical aberrations, ICCV 2023 Workshops (AROW), "
    "arXiv 2308.15499"
)
PUBLISHED = {"opticsbench": "kernel_stack_iccvw.pt", "opticsbench_rg": "kernel_stack_rg_iccvw.pt"}


def _round(x, digits: int = 10):
    """Round floats (recursively) to ``digits`` significant digits so the JSON carries no last-bit noise."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}")
    if isinstance(x, dict):
        return {k: _round(v, digits) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_round(v, digits) for v in x]
    return x


def validate(kernels: np.ndarray, reference: Path) -> dict | None:
    """Compare a regenerated stack with a published one: goal flags, maxima, the worst kernels, per-mode L1."""
    if not reference.is_file():
        return None
    ref, meta = kernelio.load_kernels(reference)
    expected = kernelio.PUBLISHED_SHA256[reference.name]
    if meta["sha256"] != expected:
        raise SystemExit(f"{reference}: sha256 {meta['sha256']} differs from the published {expected}")
    cmp = stats.compare_stacks(kernels, ref)
    out = {"reference": reference.name, "reference_sha256": meta["sha256"], **stats.validation_summary(cmp)}
    out["max_abs_difference"] = float(np.abs(kernels.astype(np.float64) - ref).max())
    out["l1_max_per_mode"] = {
        f"Z{j}": float(v) for j, v in zip(kernelio.FRINGE_MODES, cmp["l1"].max(axis=(1, 2)), strict=True)
    }
    out["worst"] = stats.worst_kernels(cmp, 5, modes=kernelio.FRINGE_MODES)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "kernels")
    parser.add_argument(
        "--reference",
        type=Path,
        default=None,
        help="folder holding the published kernel_stack_*.pt (default: not validated)",
    )
    args = parser.parse_args(argv)

    models = {"opticsbench": psf.OPTICSBENCH, "opticsbench_rg": psf.OPTICSBENCH_RG}
    files, validation = {}, {}
    for name, model in models.items():
        stack = psf.kernel_stack(model)
        sha = kernelio.save_kernels(args.out / f"{name}.npz", stack)
        files[f"{name}.npz"] = {"sha256": sha, "shape": list(stack.shape), "dtype": "float32"}
        reference = None if args.reference is None else args.reference / PUBLISHED[name]
        validation[name] = None if reference is None else validate(stack, reference)
        v = validation[name]
        note = "no reference, not validated" if v is None else f"L1 max {v['l1_max']:.2e}"
        print(f"{name}: {args.out / (name + '.npz')} sha256 {sha[:16]}… ({note})")

    disks = psf.imagenet_c_disk_stack()
    radius = np.array([r for r, _ in psf.IMAGENET_C_DEFOCUS], np.float64)
    blur = np.array([b for _, b in psf.IMAGENET_C_DEFOCUS], np.float64)
    sha = kernelio.save_kernels(
        args.out / "defocus_disk.npz",
        disks,
        modes=(0,),
        extra={"labels": np.array(["ImageNet-C defocus disk"]), "radius": radius, "alias_blur": blur},
    )
    files["defocus_disk.npz"] = {"sha256": sha, "shape": list(disks.shape), "dtype": "float32"}
    print(f"defocus_disk: {args.out / 'defocus_disk.npz'} sha256 {sha[:16]}…")

    import scipy

    std = psf.kernel_stack(psf.OPTICSBENCH)  # for the disk ↔ OpticsBench size comparison below
    provenance = {
        "generator": "scripts/make_kernels.py (corruptgen.families.opticsbench.psf)",
        "paper": CITE,
        "software": {"prysm": _prysm.prysm_version(), "numpy": np.__version__, "scipy": scipy.__version__},
        "layout": "kernels[mode, severity, colour, y, x]; modes = fringe Z4..Z11; colours R, G, B; L1 = 1 per colour",
        "pipeline": [
            "pupil: prysm make_xy_grid/cart_to_polar, 128 samples across D (Q = 1, no zero padding)",
            "aperture and rho on the grid shifted by half a sample, aperture rho <= 1 - dx; phi on the FFT-centred "
            "grid (45 deg at its origin) — the published generator's grid, needed for bit-level agreement",
            "W (waves at each colour's wavelength) = baseline_sign * Table-20 baseline + A_severity * Z_mode "
            "(unnormalised fringe Zernike, prysm zernike_nm norm=False)",
            "field = prysm.propagation.focus(aperture * exp(-2 pi i W), Q=1); PSF = |field|^2, samples lambda*N apart",
            "scipy.ndimage.zoom(PSF, lambda*N/pixel, order=3, mode=constant, grid_mode=True)",
            "25 x 25 crop starting at round(M/2) - 12 (M = resampled size, Python rounding), abs, L1-normalise",
            "OpticsBenchRG: baseline_sign +1 and red channel = blue channel kernel",
        ],
        "models": {"opticsbench": psf.OPTICSBENCH.to_dict(), "opticsbench_rg": psf.OPTICSBENCH_RG.to_dict()},
        "note_pixel_pitch": "any pitch inside models.*.equivalent_pixel_pitch_um gives identical kernels (the same "
        "resampled sizes); 4.0 um at F/5 is the round value inside it",
        "modes": [
            {"fringe": m.j, "n": m.n, "m": m.m, "name": m.name, "params_json_name": m.repo_name, "formula": m.formula}
            for m in zernike.MODES
        ],
        "pairs": {k: list(v) for k, v in zernike.PAIRS.items()},
        "severity_coefficients_waves": {
            f"Z{j}": row.tolist() for j, row in zip(zernike.FRINGE_INDICES, zernike.SEVERITY_COEFFICIENTS, strict=True)
        },
        "baseline_table20_waves": {f"Z{j}": list(v) for j, v in zernike.BASELINE_TABLE20.items()},
        "defocus_disk": {
            "reference": "hendrycks/robustness ImageNet-C/create_c/make_imagenet_c.py disk()",
            "radius_px": radius.tolist(),
            "alias_blur": blur.tolist(),
            "kernel_sum": disks[0, :, 0].sum(axis=(-1, -2)).astype(np.float64).tolist(),
            "rms_radius_px": stats.rms_radius(disks)[0, :, 0].tolist(),
            "opticsbench_red_defocus_rms_radius_px": stats.rms_radius(std)[0, :, 0].tolist(),
        },
        "files": files,
        "validation": validation,
    }
    path = args.out / "opticsbench.json"
    path.write_text(json.dumps(_round(provenance), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

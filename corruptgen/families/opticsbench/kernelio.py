"""Save and load PSF kernel stacks (OpticsBench layout: mode × severity × RGB × y × x).

Two formats are read by :func:`load_kernels`:

* our ``.npz`` (written by :func:`save_kernels`): keys ``kernels`` float32 (8, 5, 3, 25, 25), ``modes`` (fringe
  indices 4..11), ``severities`` (1..5), ``wavelengths_um`` (R, G, B); read with ``allow_pickle=False``.
* the published PyTorch zip stacks ``kernel_stack_iccvw.pt`` / ``kernel_stack_rg_iccvw.pt`` (Müller et al.,
  ICCVW 2023; the published stacks): parsed WITHOUT unpickling — the zip member ``*/data/0`` is read as
  little-endian float32 and reshaped to (8, 5, 3, 25, 25).
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from ...errors import CorruptgenError
from ...io.hashing import sha256_file

#: Stack layout: (mode, severity, colour, y, x).
STACK_SHAPE = (8, 5, 3, 25, 25)
#: Fringe Zernike index of each stack entry along axis 0 (the published stacks' order).
FRINGE_MODES = (4, 5, 6, 7, 8, 9, 10, 11)
SEVERITIES = (1, 2, 3, 4, 5)
#: Fraunhofer C, d, F lines (µm) for the R, G, B channels (``opticsbench_generate``).
WAVELENGTHS_UM = (0.6563, 0.5876, 0.4861)
#: sha256 of the published stacks.
PUBLISHED_SHA256 = {
    "kernel_stack_iccvw.pt": "afc243ccf11a2cde4896f37a87de9a97bc2e15d299706696f6d411b9ccbfdb7b",
    "kernel_stack_rg_iccvw.pt": "d2764e731286ab44988c9f13f90e519c8b1dd00cfe10b445008b777bf1625884",
}
# A fixed zip timestamp so that saved files are byte-identical across runs.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _check_stack(kernels: np.ndarray, where: str) -> np.ndarray:
    arr = np.asarray(kernels)
    if arr.ndim != 5 or arr.shape[2] != 3 or arr.shape[3] != arr.shape[4] or arr.shape[3] % 2 == 0:
        raise CorruptgenError(f"{where}: expected a stack (modes, severities, 3, K, K) with odd K, got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise CorruptgenError(f"{where}: kernels must be floating point, got {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        raise CorruptgenError(f"{where}: kernels contain NaN or inf")
    return arr.astype(np.float32, copy=False)


def _parse_torch_zip(path: Path) -> tuple[np.ndarray, dict]:
    """Read a torch-zip tensor file's raw storage ``*/data/0`` as '<f4' (no unpickling)."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = [n for n in zf.namelist() if n.endswith("/data/0")]
            if len(members) != 1:
                raise CorruptgenError(f"{path}: not a single-tensor torch zip (no unique '*/data/0' member)")
            raw = zf.read(members[0])
    except zipfile.BadZipFile:
        raise CorruptgenError(f"{path}: not a zip file (only the PyTorch >= 1.6 zip format is supported)") from None
    n = int(np.prod(STACK_SHAPE))
    if len(raw) != 4 * n:
        raise CorruptgenError(f"{path}: storage has {len(raw)} bytes, expected {4 * n} for shape {STACK_SHAPE}")
    arr = np.frombuffer(raw, dtype="<f4").reshape(STACK_SHAPE).astype(np.float32)
    meta = {
        "format": "torch-zip",
        "member": members[0],
        "modes": list(FRINGE_MODES),
        "severities": list(SEVERITIES),
        "wavelengths_um": list(WAVELENGTHS_UM),
    }
    return arr, meta


def _parse_npz(path: Path) -> tuple[np.ndarray, dict]:
    try:
        with np.load(path, allow_pickle=False) as data:
            if "kernels" not in data.files:
                raise CorruptgenError(f"{path}: npz has no 'kernels' array (keys: {', '.join(data.files) or 'none'})")
            arr = np.array(data["kernels"])
            meta = {"format": "npz"}
            for key, default in (
                ("modes", FRINGE_MODES),
                ("severities", SEVERITIES),
                ("wavelengths_um", WAVELENGTHS_UM),
            ):
                meta[key] = data[key].tolist() if key in data.files else list(default)
            if "labels" in data.files:  # optional row labels, e.g. of the ImageNet-C disk stack
                meta["labels"] = [str(v) for v in data["labels"].tolist()]
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise CorruptgenError(f"{path}: cannot read npz kernel stack ({exc})") from None
    return arr, meta


def load_kernels(path: str | os.PathLike) -> tuple[np.ndarray, dict]:
    """Load a kernel stack; returns ``(kernels float32 (M, S, 3, K, K), meta)``.

    ``meta`` holds ``path``, ``sha256`` (of the file), ``format`` ("npz" | "torch-zip"), ``modes`` (fringe
    indices), ``severities``, ``wavelengths_um`` and, for a published stack, ``published`` (its file name) when
    the sha256 matches the published file. Raises :class:`CorruptgenError` for missing or malformed files.
    """
    p = Path(path)
    if not p.is_file():
        raise CorruptgenError(f"kernel stack not found: {p}")
    if p.suffix == ".npz":
        arr, meta = _parse_npz(p)
    elif p.suffix in (".pt", ".pth"):
        arr, meta = _parse_torch_zip(p)
    else:
        raise CorruptgenError(f"{p}: unknown kernel stack format (expected .npz or a published .pt)")
    arr = _check_stack(arr, str(p))
    if len(meta["modes"]) != arr.shape[0] or len(meta["severities"]) != arr.shape[1]:
        raise CorruptgenError(f"{p}: 'modes'/'severities' do not match the kernel array shape {arr.shape}")
    digest = sha256_file(p)
    meta.update(path=str(p), sha256=digest)
    for name, sha in PUBLISHED_SHA256.items():
        if digest == sha:
            meta["published"] = name
    return arr, meta


def save_kernels(
    path: str | os.PathLike,
    kernels: np.ndarray,
    *,
    modes=FRINGE_MODES,
    severities=SEVERITIES,
    wavelengths_um=WAVELENGTHS_UM,
    extra: dict[str, np.ndarray] | None = None,
) -> str:
    """Write an uncompressed ``.npz`` byte-for-byte deterministically (fixed zip timestamps); returns its sha256.

    ``extra`` adds further plain (non-object) arrays, e.g. ``labels`` (one string per mode, returned in the
    ``meta`` of :func:`load_kernels`) or the radii of the ImageNet-C disks.
    """
    arrays = {
        "kernels": _check_stack(kernels, "save_kernels"),
        "modes": np.asarray(modes, dtype=np.int64),
        "severities": np.asarray(severities, dtype=np.int64),
        "wavelengths_um": np.asarray(wavelengths_um, dtype=np.float64),
    }
    for key, value in (extra or {}).items():
        arrays[key] = np.asarray(value)
    return save_npz(path, arrays)


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> str:
    """Deterministic uncompressed npz writer (``np.load``-compatible); returns the file's sha256."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            arr = np.asarray(value)
            if arr.dtype == object:
                raise CorruptgenError(f"save_npz: array {key!r} has dtype object (not allowed)")
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, p)
    return sha256_file(p)

"""Physical PSF kernels of OpticsBench regenerated with prysm 0.21.1 (Müller et al., ICCVW 2023, Eq. 1–2).

Eq. 1: ``h(u, v, λ) = |F{Circ(x, y) · exp(−j 2π W(x, y, λ))}|²`` with Eq. 2 ``W = Σ A_j(λ) Z_j`` in waves.
Each kernel is the Table 20 baseline wavefront of its colour plus ONE fringe mode (Z4..Z11) with the per-severity
coefficient of ``opticsbench_generate/params.json``, propagated by an un-padded FFT (prysm ``focus``, Q = 1; PSF samples
λ·N apart), resampled onto the pixel pitch by a cubic spline (``scipy.ndimage.zoom``, grid mode), cropped to 25×25
around the FFT centre and L1-normalised per colour. With :data:`OPTICSBENCH` (F/5, 4.0 µm pixels, 128 pupil
samples) this reproduces the published ``kernel_stack_iccvw.pt`` to < 1e-3 L1 per kernel, and
:data:`OPTICSBENCH_RG` reproduces ``kernel_stack_rg_iccvw.pt`` to < 1.2e-3 (docs/opticsbench_kernels.md).

Sign convention: the phase is ``exp(−2πi·W)`` as in Eq. 1 (prysm's ``Wavefront`` uses ``exp(+2πi·OPD/λ)``; the two
differ by a conjugation, i.e. a 180° rotation of the PSF about the FFT centre). The published standard stack has
``W = −baseline + A·Z`` (``baseline_sign = −1``); the RG stack has ``W = +baseline + A·Z`` with red = blue.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ._prysm import prysm_module
from .kernelio import WAVELENGTHS_UM
from .zernike import BASELINE_TABLE20, FRINGE_INDICES, SEVERITY_COEFFICIENTS, fringe_polynomial


def _baseline_items(table: dict[int, tuple[float, float, float]]) -> tuple[tuple[int, tuple[float, ...]], ...]:
    return tuple((int(j), tuple(float(v) for v in values)) for j, values in sorted(table.items()))


@dataclass(frozen=True)
class PSFModel:
    """Every parameter of the kernel generator (documented in docs/opticsbench_kernels.md).

    Attributes:
        pupil_diameter_mm: exit-pupil diameter D.
        efl_mm: focal length f; F-number N = f / D.
        pixel_pitch_um: sensor pixel pitch p; the FFT PSF (sample spacing λ·N) is resampled by λ·N / p.
        pupil_samples: samples across D; the pupil fills the array (Q = 1, no zero padding).
        kernel_size: side of the square crop (odd).
        wavelengths_um: R, G, B wavelengths.
        baseline: ((fringe j, (R, G, B) coefficient in waves), ...): the Table 20 baseline wavefront.
        baseline_sign: −1 reproduces the published standard stack, +1 the RG stack (and Eq. 1–2 read literally).
        merge_red_blue: OpticsBenchRG: the red channel is the blue channel's kernel (the published RG stack).
        spline_order: order of the ``scipy.ndimage.zoom`` resampling spline.
        published_grid: reproduce the published generator's pupil grid: ρ and the aperture (ρ ≤ D/2 − dx) on the
            grid shifted by half a sample, φ on the FFT-centred grid (45° at its origin). False: ρ and φ both on
            prysm's FFT-centred grid with aperture ρ ≤ D/2 (physically equivalent, not bit-compatible).
    """

    pupil_diameter_mm: float = 5.0
    efl_mm: float = 25.0
    pixel_pitch_um: float = 4.0
    pupil_samples: int = 128
    kernel_size: int = 25
    wavelengths_um: tuple[float, float, float] = WAVELENGTHS_UM
    baseline: tuple[tuple[int, tuple[float, ...]], ...] = field(default=_baseline_items(BASELINE_TABLE20))
    baseline_sign: float = -1.0
    merge_red_blue: bool = False
    spline_order: int = 3
    published_grid: bool = True

    def __post_init__(self) -> None:
        from ...errors import CorruptgenError

        if self.kernel_size % 2 == 0 or self.kernel_size < 3:
            raise CorruptgenError(f"kernel_size must be odd and >= 3, got {self.kernel_size}")
        if min(self.pupil_diameter_mm, self.efl_mm, self.pixel_pitch_um) <= 0 or self.pupil_samples < 16:
            raise CorruptgenError("pupil_diameter_mm, efl_mm, pixel_pitch_um must be > 0 and pupil_samples >= 16")

    @property
    def f_number(self) -> float:
        return self.efl_mm / self.pupil_diameter_mm

    def zoom_factor(self, wavelength_um: float) -> float:
        """PSF sample spacing λ·N (µm, un-padded FFT) divided by the pixel pitch."""
        return wavelength_um * self.f_number / self.pixel_pitch_um

    def resampled_sizes(self) -> tuple[int, ...]:
        """Side (px) of the resampled PSF per colour: ``round(pupil_samples · λN/p)`` (scipy ``zoom``)."""
        return tuple(round(self.pupil_samples * self.zoom_factor(w)) for w in self.wavelengths_um)

    def equivalent_pitch_range(self) -> tuple[float, float]:
        """Open interval of pixel pitches (µm) giving the same resampled sizes, hence identical kernels."""
        n, f = self.pupil_samples, self.f_number
        sizes = self.resampled_sizes()
        low = max(n * w * f / (m + 0.5) for w, m in zip(self.wavelengths_um, sizes, strict=True))
        high = min(n * w * f / (m - 0.5) for w, m in zip(self.wavelengths_um, sizes, strict=True))
        return low, high

    def to_dict(self) -> dict:
        """JSON-safe description (for provenance files)."""
        d = asdict(self)
        d["baseline"] = {f"Z{j}": list(values) for j, values in self.baseline}
        d["wavelengths_um"] = list(self.wavelengths_um)
        d["f_number"] = self.f_number
        d["zoom_factors"] = [self.zoom_factor(w) for w in self.wavelengths_um]
        d["psf_sample_spacing_um"] = [w * self.f_number for w in self.wavelengths_um]
        d["resampled_sizes_px"] = list(self.resampled_sizes())
        d["equivalent_pixel_pitch_um"] = list(self.equivalent_pitch_range())
        return d


#: Reproduces the published ``kernel_stack_iccvw.pt`` (OpticsBench).
OPTICSBENCH = PSFModel()
#: Reproduces the published ``kernel_stack_rg_iccvw.pt`` (OpticsBenchRG): baseline sign flipped, red = blue.
OPTICSBENCH_RG = replace(OPTICSBENCH, baseline_sign=1.0, merge_red_blue=True)


@functools.lru_cache(maxsize=4)
def pupil_grid(samples: int, published_grid: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aperture (0/1 float), normalised radius ρ and azimuth φ on a ``samples``² grid spanning the pupil diameter.

    Grids come from prysm (``make_xy_grid``, ``cart_to_polar``; x along columns, y along rows, unit radius = D/2).
    Returned arrays are read-only and cached.
    """
    coordinates = prysm_module("coordinates")
    x, y = coordinates.make_xy_grid(samples, diameter=2.0)
    dx = 2.0 / samples
    if published_grid:
        rho, _ = coordinates.cart_to_polar(x + dx / 2, y + dx / 2)
        _, phi = coordinates.cart_to_polar(x, y)
        phi[samples // 2, samples // 2] = np.pi / 4  # undefined azimuth at the origin: keep x↔y symmetry
        aperture = rho <= 1.0 - dx
    else:
        rho, phi = coordinates.cart_to_polar(x, y)
        aperture = rho <= 1.0
    amp = aperture.astype(np.float64)
    for arr in (amp, rho, phi):
        arr.setflags(write=False)
    return amp, rho, phi


@functools.lru_cache(maxsize=64)
def pupil_term(samples: int, published_grid: bool, j: int) -> np.ndarray:
    """Unnormalised fringe polynomial Z_j on :func:`pupil_grid` (read-only, cached)."""
    _, rho, phi = pupil_grid(samples, published_grid)
    term = fringe_polynomial(j, rho, phi)
    term.setflags(write=False)
    return term


def wavefront(model: PSFModel, channel: int, fringe: int | None, coefficient: float) -> np.ndarray:
    """Eq. 2: W (waves) = baseline_sign · Σ baseline_j[channel] · Z_j + coefficient · Z_fringe on the pupil grid."""
    n, grid = model.pupil_samples, model.published_grid
    w = np.zeros((n, n))
    for j, values in model.baseline:
        w += model.baseline_sign * values[channel] * pupil_term(n, grid, j)
    if fringe:
        w += coefficient * pupil_term(n, grid, fringe)
    return w


def psf_from_wavefront(w_waves: np.ndarray, wavelength_um: float, model: PSFModel = OPTICSBENCH) -> np.ndarray:
    """Eq. 1 on the pixel grid: |FFT(aperture · exp(−2πi·W))|², spline-resampled by λN/p, cropped, L1-normalised.

    Returns a float64 (K, K) kernel, rows = y, columns = x, centre pixel K // 2.
    """
    from scipy import ndimage

    propagation = prysm_module("propagation")
    amp = pupil_grid(model.pupil_samples, model.published_grid)[0]
    field = propagation.focus(amp * np.exp(-2j * np.pi * w_waves), 1)  # Q = 1: samples λ·N apart
    intensity = np.abs(field) ** 2
    intensity /= intensity.sum()
    with warnings.catch_warnings():  # scipy recommends mode="grid-constant"; the published kernels used "constant"
        warnings.simplefilter("ignore", UserWarning)
        resampled = ndimage.zoom(
            intensity, model.zoom_factor(wavelength_um), order=model.spline_order, mode="constant", grid_mode=True
        )
    half = model.kernel_size // 2
    start = round(resampled.shape[0] / 2) - half  # FFT centre after resampling (Python rounding, half to even)
    if start < 0 or start + model.kernel_size > resampled.shape[0]:
        from ...errors import CorruptgenError

        raise CorruptgenError(f"resampled PSF ({resampled.shape[0]} px) is smaller than the {model.kernel_size} crop")
    kernel = np.abs(resampled[start : start + model.kernel_size, start : start + model.kernel_size])
    return kernel / kernel.sum()


def psf_kernel(fringe: int | None, coefficient: float, channel: int, model: PSFModel = OPTICSBENCH) -> np.ndarray:
    """One colour's kernel: baseline of ``channel`` (0 R, 1 G, 2 B) + ``coefficient`` waves of fringe Z_``fringe``."""
    return psf_from_wavefront(wavefront(model, channel, fringe, coefficient), model.wavelengths_um[channel], model)


def rgb_kernel(fringe: int | None, coefficient: float, model: PSFModel = OPTICSBENCH) -> np.ndarray:
    """(3, K, K) float64 RGB kernel; with ``model.merge_red_blue`` the red channel is the blue kernel (RG)."""
    channels = [psf_kernel(fringe, coefficient, c, model) for c in (1, 2)]
    red = channels[1] if model.merge_red_blue else psf_kernel(fringe, coefficient, 0, model)
    return np.stack([red, *channels])


def kernel_stack(
    model: PSFModel = OPTICSBENCH,
    coefficients: np.ndarray = SEVERITY_COEFFICIENTS,
    modes: tuple[int, ...] = FRINGE_INDICES,
) -> np.ndarray:
    """Kernel stack (len(modes), severities, 3, K, K) float32; ``coefficients[i, s]`` waves of fringe ``modes[i]``."""
    coefficients = np.asarray(coefficients, dtype=np.float64)
    if coefficients.shape[0] != len(modes):
        from ...errors import CorruptgenError

        raise CorruptgenError(f"coefficients has {coefficients.shape[0]} rows for {len(modes)} modes")
    out = np.empty((len(modes), coefficients.shape[1], 3, model.kernel_size, model.kernel_size), np.float32)
    for i, j in enumerate(modes):
        for s, a in enumerate(coefficients[i]):
            out[i, s] = rgb_kernel(j, float(a), model)
    return out


#: ImageNet-C ``defocus_blur`` severities: (disk radius px, alias blur σ) of ``make_imagenet_c.py``.
IMAGENET_C_DEFOCUS = ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5))


def imagenet_c_disk(radius: float, alias_blur: float) -> np.ndarray:
    """ImageNet-C defocus disk (Hendrycks & Dietterich, ICLR 2019; ``make_imagenet_c.py`` ``disk``), float32.

    Grid ``arange(−8, 9)`` with a 3×3 Gaussian for radius ≤ 8, else ``arange(−r, r+1)`` with 5×5; binary disk
    ``x² + y² ≤ r²`` normalised to sum 1, then ``cv2.GaussianBlur(σ = alias_blur)`` (border reflect-101, so the
    sums at r = 8, 10 exceed 1 slightly, as in the reference).
    """
    import cv2

    if radius <= 8:
        coords, ksize = np.arange(-8, 8 + 1), (3, 3)
    else:
        coords, ksize = np.arange(-radius, radius + 1), (5, 5)
    xx, yy = np.meshgrid(coords, coords)
    disk = np.asarray(xx**2 + yy**2 <= radius**2, dtype=np.float32)
    disk /= disk.sum()
    return cv2.GaussianBlur(disk, ksize=ksize, sigmaX=alias_blur)


def imagenet_c_disk_stack(size: int = 21) -> np.ndarray:
    """The 5 ImageNet-C defocus disks as a (1, 5, 3, size, size) float32 stack (grey: 3 equal channels, zero-padded)."""
    out = np.zeros((1, len(IMAGENET_C_DEFOCUS), 3, size, size), np.float32)
    for s, (radius, blur) in enumerate(IMAGENET_C_DEFOCUS):
        disk = imagenet_c_disk(radius, blur)
        p = (size - disk.shape[0]) // 2
        out[0, s, :, p : p + disk.shape[0], p : p + disk.shape[1]] = disk
    return out

"""OpticsBench and OpticsBench-RG (Müller et al., ICCVW 2023): Zernike PSF kernels (generation, I/O, statistics),
their corruptions and the two benchmark families."""

from ...lazy import lazy_exports
from . import benchmark, corruptions  # noqa: F401 (register the corruptions and both families)
from .kernelio import FRINGE_MODES, SEVERITIES, STACK_SHAPE, WAVELENGTHS_UM, load_kernels, save_kernels
from .psf import OPTICSBENCH, OPTICSBENCH_RG, PSFModel, kernel_stack
from .zernike import MODES, PAIR_INDICES, PAIRS, SEVERITY_COEFFICIENTS

__all__ = [
    "FRINGE_MODES",
    "MODES",
    "OPTICSBENCH",
    "OPTICSBENCH_RG",
    "PAIRS",
    "PAIR_INDICES",
    "SEVERITIES",
    "SEVERITY_COEFFICIENTS",
    "STACK_SHAPE",
    "WAVELENGTHS_UM",
    "PSFModel",
    "kernel_stack",
    "load_kernels",
    "save_kernels",
]

# torch-based parts (batched PSF convolution, OpticsAugment) load on first use, so importing kernels stays torch-free
_WHERE = {"psf_conv": ".conv", "OpticsAugment": ".augment"}
__all__ += list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

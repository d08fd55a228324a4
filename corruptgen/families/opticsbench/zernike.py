"""Zernike fringe modes of OpticsBench: names, pairs, per-severity coefficients and the baseline wavefront.

Facts from Müller et al., "Classification robustness to common optical aberrations", ICCVW 2023 (Table 1 names,
Table 2 pairs, Table 20 baseline) and the public generator's ``opticsbench_generate/params.json`` (coefficients; the
pairs' order in the stacks). Polynomials are the *unnormalised* Zemax "Fringe" form (Z4 = 2ρ²−1, Z5 = ρ²cos2φ, …)
in waves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FringeMode:
    """One fringe Zernike term: index j, radial order n, azimuthal order m (m < 0: sine), names, formula."""

    j: int
    n: int
    m: int
    name: str  # paper Table 1
    repo_name: str  # name used by opticsbench_generate/params.json
    formula: str


#: Fringe modes 4..11 in stack order (axis 0 of a kernel stack = j − 4). Paper Table 1 names.
MODES: tuple[FringeMode, ...] = (
    FringeMode(4, 2, 0, "defocus", "defocus", "2ρ²−1"),
    FringeMode(5, 2, 2, "oblique astigmatism", "vertical_astigmatism", "ρ²cos2φ"),
    FringeMode(6, 2, -2, "vertical astigmatism", "oblique_astigmatism", "ρ²sin2φ"),
    FringeMode(7, 3, 1, "horizontal coma", "horizontal_coma", "(3ρ³−2ρ)cosφ"),
    FringeMode(8, 3, -1, "vertical coma", "vertical_coma", "(3ρ³−2ρ)sinφ"),
    FringeMode(9, 4, 0, "spherical", "primary_spherical", "6ρ⁴−6ρ²+1"),
    FringeMode(10, 3, 3, "oblique trefoil", "oblique_trefoil", "ρ³cos3φ"),
    FringeMode(11, 3, -3, "vertical trefoil", "vertical_trefoil", "ρ³sin3φ"),
)
#: Extra fringe terms used only by the baseline wavefront (Table 20).
BASELINE_MODES: tuple[FringeMode, ...] = (
    FringeMode(16, 6, 0, "secondary spherical", "", "20ρ⁶−30ρ⁴+12ρ²−1"),
    FringeMode(17, 4, 4, "vertical quadrafoil", "", "ρ⁴cos4φ"),
)
FRINGE: dict[int, FringeMode] = {mode.j: mode for mode in MODES + BASELINE_MODES}
FRINGE_INDICES: tuple[int, ...] = tuple(mode.j for mode in MODES)

#: OpticsBench corruption → (fringe j of the first, second kernel), Müller et al., ICCVW 2023, Table 2
PAIRS: dict[str, tuple[int, int]] = {
    "defocus_spherical": (4, 9),
    "astigmatism": (5, 6),
    "coma": (7, 8),
    "trefoil": (10, 11),
}
#: OpticsBench corruption → (stack index of the first, second kernel) along axis 0 of a stack.
PAIR_INDICES: dict[str, tuple[int, int]] = {name: (a - 4, b - 4) for name, (a, b) in PAIRS.items()}

#: Per-severity coefficients (waves, unnormalised fringe), rows fringe Z4..Z11, columns severity 1..5
#: (``opticsbench_generate/params.json``). The published stacks use exactly these values.
SEVERITY_COEFFICIENTS = np.array(
    [
        [0.7, 0.9, 1.3, 1.6, 2.1],
        [1.1, 1.5, 2.1, 3.0, 3.7],
        [1.1, 1.5, 2.2, 3.0, 3.8],
        [0.9, 1.3, 2.2, 2.9, 3.5],
        [0.9, 1.3, 2.2, 2.9, 3.5],
        [0.7, 0.9, 1.4, 2.0, 2.6],
        [0.9, 1.4, 2.2, 2.8, 3.3],
        [0.9, 1.4, 2.2, 2.8, 3.2],
    ]
)
SEVERITY_COEFFICIENTS.setflags(write=False)

#: Baseline wavefront of paper Table 20, waves at each colour's wavelength (R 0.6563, G 0.5876, B 0.4861 µm).
#: The table's columns are headed "4 9 15 16" but named "defocus, spherical, secondary spherical, vertical
#: quadrofoil": the last two are fringe Z16 (6,0) and Z17 (4,4) — both transpose-symmetric, as the published
#: stacks require; fringe Z15 (secondary coma) would break that symmetry. Verified: dropping Z16 moves
#: the regenerated kernels by up to 0.25 L1 from the published stack, with it they agree to 1e-3.
BASELINE_TABLE20: dict[int, tuple[float, float, float]] = {
    4: (0.32671, 0.11273, -0.41772),
    9: (0.088223, 0.095923, 0.10825),
    16: (-0.061867, -0.069497, -0.085119),
    17: (-4.7631e-06, -5.3967e-06, -6.7436e-06),
}


def mode_label(j: int) -> str:
    """Short label such as ``"Z7 horizontal coma"``."""
    return f"Z{j} {FRINGE[j].name}"


def fringe_polynomial(j: int, rho: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Unnormalised fringe Zernike Z_j(ρ, φ) via prysm 0.21.1 (``zernike_nm(n, m, ρ, φ, norm=False)``)."""
    from ._prysm import prysm_module

    polynomials = prysm_module("polynomials")
    if j not in FRINGE:
        n, m = polynomials.fringe_to_nm(j)
    else:
        n, m = FRINGE[j].n, FRINGE[j].m
    return polynomials.zernike_nm(n, m, rho, phi, norm=False)

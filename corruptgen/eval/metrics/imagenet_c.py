"""ImageNet-C corruption errors: CE, mCE, relative CE and relative mCE (Hendrycks & Dietterich, ICLR 2019,
arXiv:1903.12261; Laugros, PhD thesis 2022, Eq. 2.4).

.. math::
    CE_c = \\frac{\\sum_s E_{s,c}}{\\sum_s E^{ref}_{s,c}}, \\qquad
    rCE_c = \\frac{\\sum_s (E_{s,c} - E_{clean})}{\\sum_s (E^{ref}_{s,c} - E^{ref}_{clean})}

The default reference is AlexNet: the per-severity top-1 errors of the hendrycks/robustness README table (commit
76d9393, PR #20; the same averages as google-research/augmix ``ALEXNET_ERR``) on the full 50,000-image ImageNet-C,
and the clean error 0.4345 (torchvision's documented 1-crop error of the ``alexnet`` weights the reference
``ImageNet-C/test.py`` loads). Any corruptgen results file can be the reference instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Top-1 error of AlexNet per corruption and severity 1..5 (the AlexNet errors of the ImageNet-C reference evaluation).
ALEXNET_ERRORS: dict[str, tuple[float, float, float, float, float]] = {
    "gaussian_noise": (0.69528, 0.82542, 0.93554, 0.98138, 0.99452),
    "shot_noise": (0.71224, 0.85108, 0.93574, 0.98182, 0.99146),
    "impulse_noise": (0.78374, 0.89808, 0.94870, 0.98720, 0.99548),
    "defocus_blur": (0.65624, 0.73202, 0.85036, 0.91364, 0.94714),
    "glass_blur": (0.64308, 0.75054, 0.88806, 0.91622, 0.93344),
    "motion_blur": (0.58430, 0.70048, 0.82108, 0.89750, 0.92638),
    "zoom_blur": (0.70008, 0.76992, 0.80784, 0.84198, 0.87198),
    "snow": (0.71726, 0.88392, 0.86468, 0.91870, 0.94952),
    "frost": (0.61390, 0.79734, 0.88790, 0.89942, 0.93430),
    "fog": (0.67474, 0.76050, 0.84378, 0.87260, 0.94500),
    "brightness": (0.45140, 0.48502, 0.54048, 0.62166, 0.72440),
    "contrast": (0.64548, 0.76150, 0.88874, 0.97760, 0.99270),
    "elastic_transform": (0.52596, 0.70116, 0.55686, 0.64076, 0.80554),
    "pixelate": (0.52218, 0.54620, 0.73728, 0.87092, 0.91262),
    "jpeg_compression": (0.51002, 0.54718, 0.57294, 0.65458, 0.74778),
    "speckle_noise": (0.66192, 0.74440, 0.90246, 0.94548, 0.97268),
    "gaussian_blur": (0.54732, 0.70444, 0.82574, 0.89864, 0.95940),
    "spatter": (0.47196, 0.62194, 0.75052, 0.84132, 0.90182),
    "saturate": (0.59342, 0.65514, 0.51174, 0.70834, 0.82260),
}
#: AlexNet clean top-1 error used for relative mCE (torchvision docs).
ALEXNET_CLEAN_ERROR = 0.4345
#: The 15 corruptions of the ImageNet-C release: the mCE of the paper averages over these.
COMMON_15 = tuple(list(ALEXNET_ERRORS)[:15])
ALEXNET_SOURCE = ("AlexNet, full 50k ImageNet-C: hendrycks/robustness README table (commit 76d9393, PR #20) = "
                  "google-research/augmix ALEXNET_ERR; clean error 0.4345 (torchvision alexnet docs)")  # fmt: skip

_SUBSET_RE = re.compile(r"^(?P<name>[a-z0-9_]+?)_s(?P<sev>\d+)$")


def alexnet_reference() -> dict[str, Any]:
    """The default reference as ``{"errors": {corruption: {severity: error}}, "clean_error", "source"}``."""
    errors = {c: {s + 1: e for s, e in enumerate(v)} for c, v in ALEXNET_ERRORS.items()}
    return {"errors": errors, "clean_error": ALEXNET_CLEAN_ERROR, "source": ALEXNET_SOURCE, "set": "alexnet-50k"}


def split_subset(name: str, info: Mapping[str, Any] | None = None) -> tuple[str, int] | None:
    """(corruption, severity) of a subset, from its description or a ``<corruption>_s<severity>`` name."""
    info = info or {}
    if info.get("corruption") and info.get("severity") is not None:
        return str(info["corruption"]).split("/")[-1], int(info["severity"])
    m = _SUBSET_RE.match(name)
    return (m["name"], int(m["sev"])) if m else None


def errors_by_corruption(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[int, float]]:
    """{corruption: {severity: top-1 error}} from a per-subset table (subsets without a severity are skipped)."""
    out: dict[str, dict[int, float]] = {}
    for name, row in rows.items():
        cs = split_subset(name, row)
        if cs is None or row.get("error") is None:
            continue
        out.setdefault(cs[0], {})[cs[1]] = float(row["error"])
    return out


def reference_from_rows(rows: Mapping[str, Mapping[str, Any]], source: str) -> dict[str, Any]:
    """Turn another model's per-subset table (a corruptgen results file) into a CE reference."""
    clean = rows.get("clean", {}).get("error")
    return {"errors": errors_by_corruption(rows), "clean_error": clean, "source": source, "set": f"reference:{source}"}


def corruption_errors(
    errors: Mapping[str, Mapping[int, float]],
    clean_error: float | None,
    reference: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """CE and relative CE per corruption and their means (mCE, relative mCE) against ``reference``.

    Sums run over the severities present for both the model and the reference; ``complete`` says whether all 15
    release corruptions at 5 severities were there (only then is mCE comparable with published numbers).
    """
    ref = reference or alexnet_reference()
    ref_err, ref_clean = ref["errors"], ref.get("clean_error")
    per: dict[str, Any] = {}
    missing_ref = []
    for corruption, by_sev in sorted(errors.items()):
        rsev = ref_err.get(corruption)
        if not rsev:
            missing_ref.append(corruption)
            continue
        sevs = sorted(s for s in by_sev if s in rsev)
        if not sevs:
            missing_ref.append(corruption)
            continue
        e = np.array([by_sev[s] for s in sevs])
        r = np.array([rsev[s] for s in sevs])
        ce = float(e.sum() / r.sum())
        rce = None
        if clean_error is not None and ref_clean is not None:
            denom = float((r - ref_clean).sum())
            rce = float((e - clean_error).sum() / denom) if denom != 0 else None
        per[corruption] = {"severities": sevs, "errors": {str(s): by_sev[s] for s in sevs}, "ce": ce,
                           "relative_ce": rce}  # fmt: skip
    ces = [v["ce"] for v in per.values()]
    rces = [v["relative_ce"] for v in per.values() if v["relative_ce"] is not None]
    complete = all(c in per and len(per[c]["severities"]) == 5 for c in COMMON_15)
    notes = []
    if missing_ref:
        notes.append(f"no reference errors for: {', '.join(missing_ref)} (left out of mCE)")
    if per and not complete:
        notes.append("not all 15 ImageNet-C corruptions x 5 severities: mCE is not comparable with published values")
    return {
        "reference": ref.get("source"),
        "denominator_set": ref.get("set"),
        "reference_clean_error": ref_clean,
        "corruptions": per,
        "mce": float(np.mean(ces)) if ces else None,
        "relative_mce": float(np.mean(rces)) if rces else None,
        "mce_common15": float(np.mean([per[c]["ce"] for c in COMMON_15 if c in per])) if complete else None,
        "complete": complete,
        "notes": notes,
    }


def imagenet_c_metrics(rows: Mapping[str, Mapping[str, Any]], reference: Mapping[str, Any] | None = None) -> dict:
    """CE / mCE / relative mCE of a model from its per-subset table (see :func:`corruption_errors`)."""
    clean = rows.get("clean", {}).get("error")
    return corruption_errors(errors_by_corruption(rows), clean, reference)


NO_ALEXNET = ("no AlexNet errors are published for this set (CIFAR-10/100-C, Tiny-ImageNet-C, ImageNet-64x64-C): "
              "CE/mCE need a reference model's results file, corruptgen eval --reference results.json")  # fmt: skip


def reference_required_metrics(rows: Mapping[str, Mapping[str, Any]], reference: Mapping[str, Any] | None) -> dict:
    """ImageNet-C's CE / mCE / relative mCE for the small-image variants, whose papers give no AlexNet errors: the
    denominators come only from ``reference`` (another model's results); without it the errors per corruption and
    severity and their mean (``mean_error``, the corruption error RobustBench reports for CIFAR-10-C) are given."""
    errors = errors_by_corruption(rows)
    values = [e for by_sev in errors.values() for e in by_sev.values()]
    mean_error = float(np.mean(values)) if values else None
    if reference is not None:
        return {**imagenet_c_metrics(rows, reference), "mean_error": mean_error}
    per = {c: {"severities": sorted(by_sev), "errors": {str(s): by_sev[s] for s in sorted(by_sev)}, "ce": None,
               "relative_ce": None} for c, by_sev in sorted(errors.items())}  # fmt: skip
    return {"reference": None, "denominator_set": None, "reference_clean_error": None, "corruptions": per,
            "mce": None, "relative_mce": None, "mce_common15": None, "mean_error": mean_error,
            "complete": all(c in per and len(per[c]["severities"]) == 5 for c in COMMON_15),
            "notes": [NO_ALEXNET]}  # fmt: skip

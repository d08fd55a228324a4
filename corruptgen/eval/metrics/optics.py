"""OpticsBench analyses (Müller, Braun, Keuper, ICCVW 2023, arXiv:2308.15499, §4; OpticsBench ``inference.py``).

* Δ_{c,b} = Acc_c − Acc_b (Eq. 3): each optical corruption's top-1 minus that of the ImageNet-C defocus-disk
  baseline at the same severity (subsets ``<corruption>_s<sev>`` and ``defocus_disk_s<sev>``).
* Kendall τ (with its two-sided p-value for τ = 0, scipy) between the ranking of several models on a corruption and
  their ranking on the baseline at the same severity. These analyses are in no public code; they follow the paper.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

BASELINE = "defocus_disk"
_RE = re.compile(r"^(?P<name>[a-z0-9_]+?)_s(?P<sev>\d+)$")


def _split(name: str) -> tuple[str, int] | None:
    m = _RE.match(name)
    return (m["name"], int(m["sev"])) if m else None


def delta_to_baseline(top1: Mapping[str, float | None], baseline: str = BASELINE) -> dict[str, Any]:
    """Δ per subset (Eq. 3) and its mean per corruption over the severities with a baseline."""
    base = {}
    for name, acc in top1.items():
        cs = _split(name)
        if cs and cs[0] == baseline and acc is not None:
            base[cs[1]] = acc
    delta, per_corr = {}, {}
    for name, acc in top1.items():
        cs = _split(name)
        if not cs or cs[0] == baseline or acc is None or cs[1] not in base:
            continue
        delta[name] = float(acc - base[cs[1]])
        per_corr.setdefault(cs[0], []).append(delta[name])
    return {"baseline": {str(s): a for s, a in sorted(base.items())}, "delta": delta,
            "mean_delta": {c: float(np.mean(v)) for c, v in sorted(per_corr.items())},
            "notes": [] if base else [f"no {baseline}_s<sev> baseline subset: Δ not computed"]}  # fmt: skip


def kendall_rankings(top1_by_model: Mapping[str, Mapping[str, float | None]], baseline: str = BASELINE):
    """Kendall τ-b between models' accuracies on each corruption subset and on the baseline at its severity.

    Returns ``{subset: {"tau", "p", "models"}}`` and the mean τ; needs at least 3 models with both values.
    """
    from scipy.stats import kendalltau

    subsets = sorted({s for rows in top1_by_model.values() for s in rows})
    out: dict[str, Any] = {}
    for name in subsets:
        cs = _split(name)
        if not cs or cs[0] == baseline:
            continue
        base_name = f"{baseline}_s{cs[1]}"
        pairs = [(rows.get(name), rows.get(base_name)) for rows in top1_by_model.values()]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if len(pairs) < 3:
            continue
        a, b = np.array(pairs).T
        res = kendalltau(a, b)
        tau = None if not np.isfinite(res.statistic) else float(res.statistic)
        out[name] = {"tau": tau, "p": None if not np.isfinite(res.pvalue) else float(res.pvalue),
                     "models": len(pairs)}  # fmt: skip
    taus = [v["tau"] for v in out.values() if v["tau"] is not None]
    return {"subsets": out, "mean_tau": float(np.mean(taus)) if taus else None}

"""Corruption errors of the ``laugros`` family against a reference model (Laugros, PhD thesis, Université Grenoble
Alpes 2022, Eq. 2.4 and Table 4.1).

The family has no severity levels, so a corruption's CE is one ratio of top-1 errors on its subset:

.. math::
    CE_c = \\frac{E_c}{E^{ref}_c}, \\qquad rCE_c = \\frac{E_c - E_{clean}}{E^{ref}_c - E^{ref}_{clean}}

(CE as ImageNet-C's, which Table 4.1's set₁ / set₂ columns average; the relative form is Eq. 2.4). The thesis's
reference is AlexNet, whose errors on these corruptions are not published ("it is required to compute it oneself",
§2.3.1): the reference is a results file of another model on the same build (``--reference``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NO_REFERENCE = ("CE needs a reference model's results on the same build (--reference results.json; the thesis's "
                "reference is AlexNet, Eq. 2.4, whose errors on these corruptions are not published)")  # fmt: skip


def _ratio(num: float | None, den: float | None) -> float | None:
    return None if num is None or den is None or den == 0 else float(num / den)


def laugros_metrics(rows: Mapping[str, Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]] | None,
                    source: str | None = None) -> dict[str, Any]:  # fmt: skip
    """``{"reference", "corruptions": {name: {"error", "reference_error", "ce", "relative_ce"}}, "notes"}`` for every
    corrupted subset of ``rows`` (a per-subset table); ``reference``: the reference model's table, or ``None``."""
    clean = rows.get("clean", {}).get("error")
    ref_clean = (reference or {}).get("clean", {}).get("error")
    out: dict[str, Any] = {}
    missing = []
    for name, row in rows.items():
        if name == "clean" or not row.get("corruption"):
            continue
        ref_row = (reference or {}).get(name) or {}
        if reference is not None and ref_row.get("error") is None:
            missing.append(name)
        error, ref = row.get("error"), ref_row.get("error")
        rel = None if None in (error, clean, ref, ref_clean) else _ratio(error - clean, ref - ref_clean)
        out[name] = {"error": error, "reference_error": ref, "ce": _ratio(error, ref), "relative_ce": rel}
    notes = [NO_REFERENCE] if reference is None else []
    if missing:
        notes.append(f"the reference has no error for: {', '.join(missing)}")
    return {"reference": source if reference is not None else None, "corruptions": out, "notes": notes}

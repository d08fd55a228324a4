"""Table 3.4c of Laugros's thesis (PhD thesis, Université Grenoble Alpes, 2022, §3.3.4.1): APP = acc_c / acc_clean
(Eq. 2.2) per adversarial attack, one row per model, next to its clean top-1.

Its columns are every adversarial subset of the results: the white-box attacks of ``corruptgen eval --attacks``
(``whitebox_*``) and the transfer attacks of an ``adversarial`` build (black-box, crafted on its surrogate):
:func:`adversarial_column` is the column matcher of the table's section in ``corruptgen.eval.thesis_tables``,
which ``corruptgen report`` prints where such subsets are present.
"""

from __future__ import annotations

import re
from typing import Any

from .metrics.common import WHITEBOX

ADVERSARIAL_BENCHMARK = "adversarial"
_NAME = re.compile(r"^(?P<attack>.+?)_eps(?P<low>\d+_\d+)(?:to(?P<high>\d+_\d+))?(?P<rest>_.+)?$")


def attack_label(subset: str) -> str:
    """``pgd_eps0_04`` -> ``pgd ε=0.04``; ``fgsm_eps0_0025to0_025`` -> ``fgsm ε∈[0.0025, 0.025]``."""
    m = _NAME.match(subset)
    if not m:
        return subset
    low, high = (v.replace("_", ".") if v else None for v in (m["low"], m["high"]))
    eps = f"ε∈[{low}, {high}]" if high else f"ε={low}"
    return " ".join(p for p in (m["attack"], eps, (m["rest"] or "").strip("_").replace("_", " ")) if p)


def adversarial_column(subset: str, row: dict[str, Any], benchmark: str) -> str | None:
    """The Table 3.4c column of a result's subset row, or ``None`` when it is no attack: ``whitebox_*`` rows (from
    ``eval --attacks``) and, on an ``adversarial`` build, its subsets (transfer attacks). The signature of a
    ``corruptgen.eval.thesis_tables.Section`` matcher: ``Section("3.4c", TITLE, adversarial_column)``."""
    if subset == "clean":
        return None
    if str(row.get("corruption") or "").startswith(WHITEBOX):
        return f"{attack_label(subset.removeprefix('whitebox_'))} (white-box)"
    return f"{attack_label(subset)} (black-box)" if benchmark == ADVERSARIAL_BENCHMARK else None

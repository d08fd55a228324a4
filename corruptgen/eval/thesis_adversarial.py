"""Table 3.4c of Laugros's thesis (PhD thesis, Université Grenoble Alpes, 2022, §3.3.4.1): APP = acc_c / acc_clean
(Eq. 2.2) per adversarial attack, one row per model, next to its clean top-1.

Its columns are every adversarial subset of the results: the white-box attacks of ``corruptgen eval --attacks``
(``whitebox_*``) and the transfer attacks of an ``adversarial`` build (black-box, crafted on its surrogate):
:func:`adversarial_column` is the column matcher of the table's section in ``corruptgen.eval.thesis_tables``,
which ``corruptgen report`` prints where such subsets are present. The attacks of §3.3.3.1 in the setting the thesis
ran them (white-box PGD and PGD_LL at ε = 0.04 and CW_2, black-box MI_FGSM at ε = 0.04 and 0.08: ``--selection
eccvw2020`` and ``eval --attacks eccvw2020``) are headed as the thesis prints them, in its order; any other attack
or setting says which it is (``(white-box)``, ``(black-box)``). A transfer set evaluated on the very model it was
crafted on is a white-box attack for that model: its column says so (:func:`mark_surrogate`).
"""

from __future__ import annotations

import re
from typing import Any

from ..attacks.spec import ATTACKS, SELECTIONS, parse_attacks
from .metrics.common import WHITEBOX

ADVERSARIAL_BENCHMARK = "adversarial"
#: a transfer subset's row flag: the evaluated model is the surrogate the subset was crafted on
ON_SURROGATE = "on_surrogate"
ON_SURROGATE_NOTE = "crafted on this model: white-box"
_NAME = re.compile(r"^(?P<attack>.+?)_eps(?P<low>\d+_\d+)(?:to(?P<high>\d+_\d+))?(?P<rest>_.+)?$")


def attack_label(subset: str) -> str:
    """``pgd_eps0_04`` -> ``pgd ε=0.04``; ``fgsm_eps0_0025to0_025`` -> ``fgsm ε∈[0.0025, 0.025]``; ``cw_l2_kappa50``
    -> ``cw_l2 kappa50``."""
    m = _NAME.match(subset)
    if not m:
        name = max((n for n in ATTACKS.names() if subset.startswith(n + "_")), key=len, default=None)
        return subset if name is None else f"{name} {subset[len(name) + 1 :].replace('_', ' ')}"
    low, high = (v.replace("_", ".") if v else None for v in (m["low"], m["high"]))
    eps = f"ε∈[{low}, {high}]" if high else f"ε={low}"
    return " ".join(p for p in (m["attack"], eps, (m["rest"] or "").strip("_").replace("_", " ")) if p)


#: Table 3.4c's columns (setting, subset name) in the thesis's order: white-box PGD, PGD_LL, CW_2, black-box MI_FGSM
THESIS_COLUMNS: dict[tuple[str, str], str] = {
    **{("white-box", s.subset_name): attack_label(s.subset_name) for s in
       parse_attacks(SELECTIONS["eccvw2020"].whitebox)},
    **{("black-box", s.subset_name): attack_label(s.subset_name) for s in
       parse_attacks(SELECTIONS["eccvw2020"].transfer)},
}  # fmt: skip
ORDER = tuple(THESIS_COLUMNS.values())


def adversarial_column(subset: str, row: dict[str, Any], benchmark: str) -> str | None:
    """The Table 3.4c column of a result's subset row, or ``None`` when it is no attack: ``whitebox_*`` rows (from
    ``eval --attacks``) and, on an ``adversarial`` build, its subsets (transfer attacks). The signature of a
    ``corruptgen.eval.thesis_tables.Section`` matcher: ``Section("3.4c", TITLE, adversarial_column)``."""
    if subset == "clean":
        return None
    if str(row.get("corruption") or "").startswith(WHITEBOX):
        name = subset.removeprefix("whitebox_")
        return THESIS_COLUMNS.get(("white-box", name)) or f"{attack_label(name)} (white-box)"
    if benchmark != ADVERSARIAL_BENCHMARK:
        return None
    if row.get(ON_SURROGATE):
        return f"{attack_label(subset)} ({ON_SURROGATE_NOTE})"
    return THESIS_COLUMNS.get(("black-box", subset)) or f"{attack_label(subset)} (black-box)"


def mark_surrogate(result: dict[str, Any], manifest: dict[str, Any] | None, model: Any) -> None:
    """On an ``adversarial`` build, record its surrogate in ``result["data"]["surrogate"]`` and, when the evaluated
    ``model`` is that surrogate (the same weights' sha256), flag every transfer subset's row :data:`ON_SURROGATE`: for
    this model those sets are white-box, not black-box, and Table 3.4c heads them so."""
    plan = (manifest or {}).get("plan") or {}
    options = dict(plan.get("family_options") or {})
    sha = options.get("surrogate_sha256")
    if (manifest or {}).get("benchmark") != ADVERSARIAL_BENCHMARK or not isinstance(sha, str):
        return
    from ..models import weights_sha256

    try:
        mine = weights_sha256(model)
    except Exception:  # a model whose weights cannot be hashed is not known to be the surrogate
        mine = None
    itself = mine == sha
    result["data"]["surrogate"] = {"spec": options.get("surrogate"), "sha256": sha, "is_evaluated_model": itself}
    if not itself:
        return
    for name, row in result["metrics"]["subsets"].items():
        if name != "clean" and not str(row.get("corruption") or "").startswith(WHITEBOX):
            row[ON_SURROGATE] = True

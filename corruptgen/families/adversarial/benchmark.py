"""Transfer (black-box) adversarial sets of Laugros's thesis, crafted on a surrogate model.

Selections (``--selection``), the thesis's transfer attacks as it ran them (:data:`corruptgen.attacks.SELECTIONS`;
their white-box attacks are ``corruptgen eval --attacks <selection>``):

* ``eccvw2020`` (default; thesis §3.3.3.1, Table 3.4c): MI-FGSM at ε = 0.04 and 0.08 (10 iterations, decay 1), "the"
  black-box attack there (PGD, PGD_LL and CW_2 are its white-box attacks);
* ``iccvw2019`` (thesis §3.2.2, Table 3.1): FGSM, LL-FGSM, PGD and LL-PGD (10 iterations) with ε drawn per sample
  uniformly from [0.0025, 0.025] — the thesis's 0.005–0.05 is on pixels in [−1, 1], halved here for pixels in [0, 1].

``--attacks`` builds any list of attacks instead (``pgd:eps=0.02,cw_l2``, see :mod:`corruptgen.attacks.spec`);
``--subsets`` picks among the subsets of both selections. ``--surrogate`` is any model
:func:`corruptgen.models.load_model` loads (default ``efficientnet_lite0``); its spec and weights' sha256 are part of
every subset's options, so of the plan id, the manifest and the card. Images are resized to 224×224 first, the
thesis's only pre-processing (§3.3.3.2; the ``laugros`` family's, so Tables 3.4b and 3.4c share one clean set).
They are stored as 8-bit PNG unless ``--format`` asks otherwise: ``npy`` stores the attack's float result (float32
on [0, 1]); JPEG at quality 85 destroys an ε = 0.04 perturbation.

``--labels`` (as ``corruptgen eval``'s): an attack moves away from a sample's label on the surrogate, which means
something only when the source's labels index the surrogate's classes. ``check`` (the default) refuses, before any
sample is crafted, a source whose labels are another space or cannot be told to be the surrogate's (unnamed class
indices, e.g. an ``npy:`` array); ``match`` states that they are; ``ignore`` attacks every sample away from the
surrogate's own clean decision, as for an unlabelled source.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from ...attacks.spec import SELECTIONS as ATTACK_SELECTIONS
from ...attacks.spec import AttackSpec, parse_attacks
from ...errors import CorruptgenError
from ...family.benchmark import CLEAN, Benchmark, Grid, Option, register_benchmark
from ...family.plan import Plan, SourceSpec, Subset
from ...models.labels import labels_space, same_space
from .corruptions import FAMILY, IGNORE_LABELS
from .surrogate import canonical_spec, load_surrogate

if TYPE_CHECKING:
    from ...io.sources import Source

CITE = ("A. Laugros. Robustness of Neural Networks to Synthetic Corruptions and Adversarial Attacks. PhD thesis, "
        "Université Grenoble Alpes, 2022 (§2.3.2.2, §3.2, §3.3.3.1); Laugros, Caplier, Ospici, ICCV Workshops 2019 "
        "and ECCV Workshops 2020.")  # fmt: skip
#: selection -> its transfer attacks (the white-box ones are ``corruptgen eval --attacks <selection>``)
SELECTIONS = {name: selection.transfer for name, selection in ATTACK_SELECTIONS.items()}
#: the storage formats: 8-bit PNG (default), float32 arrays, and the lossy ones (with a warning)
FORMATS = ("png", "npy", "jpg", "webp")
DEFAULT_SELECTION = "eccvw2020"
OPTIONS = (
    Option("surrogate", "model the transfer attacks are crafted on (default efficientnet_lite0; module:attr, "
           "torchscript:<file>, timm:<name>)"),
    Option("selection", f"the thesis's transfer attacks: {', '.join(SELECTIONS)} (default {DEFAULT_SELECTION}: MI-FGSM "
           "at eps 0.04 and 0.08; their white-box attacks are `eval --attacks <selection>`)"),
    Option("attacks", "attacks to craft instead, e.g. pgd:eps=0.02,mi_fgsm:eps=0.08,cw_l2"),
    Option("labels", "check (default): refuse source labels that are not the surrogate's classes; match: they are; "
           "ignore: attack the surrogate's own clean decisions"),
)  # fmt: skip
LABEL_MODES = ("check", "match", "ignore")


def selection_specs(name: str) -> tuple[AttackSpec, ...]:
    if name not in SELECTIONS:
        raise CorruptgenError(f"unknown --selection {name!r}; use one of {', '.join(SELECTIONS)}")
    return parse_attacks(SELECTIONS[name])


def _subset(spec: AttackSpec, surrogate: str | None = None, sha256: str | None = None, labels: str | None = None,
            ) -> Subset:  # fmt: skip
    """The subset of ``spec`` (with the surrogate's spec and weights' sha256 once chosen: every plan has them; with
    ``labels="ignore"``, the option that makes it attack the surrogate's clean decisions)."""
    options = {**dict(spec.params), **({"surrogate": surrogate, "surrogate_sha256": sha256} if surrogate else {})}
    if labels == "ignore":
        options[IGNORE_LABELS] = True
    return Subset(name=spec.subset_name, corruption=f"{FAMILY}/{spec.name}", options=tuple(sorted(options.items())))


class Adversarial(Benchmark):
    """The adversarial family: subsets from a selection, ``--subsets`` or ``--attacks``, on one surrogate."""

    def select(self, names: str | Sequence[str] | None, surrogate: str | None = None, selection: str | None = None,
               attacks: str | None = None, surrogate_sha256: str | None = None, labels: str | None = None,
               **other: Any) -> tuple[Subset, ...]:  # fmt: skip
        if other:
            flags = ", ".join("--" + k.replace("_", "-") for k in other)
            raise CorruptgenError(f"{self.name} takes no option {flags} (it has --surrogate, --selection, --attacks, "
                                  "--labels)")  # fmt: skip
        chosen = [flag for flag, value in (("--subsets", names), ("--selection", selection), ("--attacks", attacks))
                  if value is not None]  # fmt: skip
        if len(chosen) > 1:
            raise CorruptgenError(f"{self.name}: use one of {', '.join(chosen)}")
        if attacks is not None:
            specs: Sequence[AttackSpec | None] = parse_attacks(attacks)
        elif names is not None:
            grid = Grid(tuple(n for n in self.subsets if n != "clean"), ordered=True)
            specs = [None if n == "clean" else self.specs[n]
                     for n in grid.resolve(names, None, self.default_subsets, self.name)]  # fmt: skip
        else:
            specs = selection_specs(selection or DEFAULT_SELECTION)
        model = load_surrogate(canonical_spec(surrogate)) if any(specs) else None
        if model is not None and surrogate_sha256 not in (None, model.sha256):
            raise CorruptgenError(f"surrogate {model.spec}: weights sha256 {model.sha256[:12]}…, the plan has "
                                  f"{surrogate_sha256[:12]}…")  # fmt: skip
        return tuple(CLEAN if s is None else _subset(s, model.spec, model.sha256, labels) for s in specs)

    @property
    def specs(self) -> dict[str, AttackSpec]:
        return {s.subset_name: s for name in SELECTIONS for s in selection_specs(name)}

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Canonical options: the surrogate's spec (a TorchScript path absolute; the default when unset) and its
        weights' sha256 (so both are in the manifest and the card), the selection name, the attack list in canonical
        syntax. Loading the surrogate here fails early, in one line, when it cannot be loaded or differentiated."""
        out = super().family_options(options)
        if out.get("labels") not in (None, *LABEL_MODES):
            raise CorruptgenError(f"--labels must be one of {', '.join(LABEL_MODES)}, got {out['labels']!r}")
        if out.get("labels") == "check":
            del out["labels"]  # the default: plans (and their ids) as without the option
        if "selection" in out:
            selection_specs(out["selection"])
        if "attacks" in out:
            out["attacks"] = ",".join(s.label() for s in parse_attacks(out["attacks"]))
        model = load_surrogate(canonical_spec(out.get("surrogate")))  # after the cheap checks
        out["surrogate"], out["surrogate_sha256"] = model.spec, model.sha256
        return out

    def check_source(self, plan: Plan, source: Source) -> None:
        """With ``--labels check`` (the default), refuse in one line a labelled source whose labels are not known to
        index the surrogate's classes (another set of names, or unnamed indices)."""
        options = dict(plan.family_options)
        if options.get("labels", "check") != "check" or not source.labelled:
            return
        if not any(s.corruption for s in plan.subsets):  # a clean-only build attacks nothing
            return
        seen: dict[int, str | None] = {}
        for item in source.items():
            if item.label is not None and item.label >= 0:
                seen[item.label] = seen.get(item.label) or item.label_name
        if not seen:  # every sample unlabelled: each is attacked away from the surrogate's decision
            return
        space = labels_space(source.describe(), seen, named_by="the source", where=source.spec)
        if space is None:
            return
        surrogate = load_surrogate(canonical_spec(options.get("surrogate")))
        if surrogate.space is None or not same_space(space, surrogate.space):
            model = "an unknown label space" if surrogate.space is None else surrogate.space.description
            raise CorruptgenError(
                f"label spaces differ: the source's labels are {space.description} but surrogate {surrogate.spec} "
                f"predicts {model}, so attacking away from them would be meaningless; if they are the surrogate's "
                "classes pass --labels match (Python: labels='match'), to attack the surrogate's own clean "
                "decisions --labels ignore (see docs/adversarial.md)"
            )

    def plan(self, *, source: SourceSpec | str = "samples", subsets=None, clean: bool = True,
             preprocess: str | None = None, size: int | None = None, **options: Any) -> Plan:  # fmt: skip
        """As :meth:`Benchmark.plan`, with the build's storage in every attack's options (the attack stores float32
        for ``npy``, else 8 bits, and measures what a reader decodes); a lossy ``--format`` is built when asked for,
        with a one-line warning."""
        fmt = options.get("image_format")
        if fmt in ("jpg", "webp"):
            print(f"corruptgen: warning: --format {fmt} is lossy: it changes adversarial perturbations (an ε = 0.04 "
                  "one does not survive JPEG quality 85); the default png keeps them", file=sys.stderr)  # fmt: skip
        plan = super().plan(source=source, subsets=subsets, clean=clean, preprocess=preprocess, size=size, **options)
        codec = (("image_format", plan.image_format),)
        if plan.image_format in ("jpg", "webp"):
            codec += (("quality", plan.quality),)
        chosen = tuple(dataclasses.replace(s, options=tuple(sorted((*s.options, *codec)))) if s.corruption else s
                       for s in plan.subsets)  # fmt: skip
        return dataclasses.replace(plan, subsets=chosen)


@register_benchmark("adversarial")
@cache
def adversarial() -> Adversarial:
    """Every subset of the named selections (the default: ``eccvw2020``); ``--attacks`` adds any other."""
    subsets = {s.subset_name: _subset(s) for name in SELECTIONS for s in selection_specs(name)}
    return Adversarial(name="adversarial", title="Adversarial transfer sets", cite=CITE,
                       subsets={"clean": CLEAN, **subsets},
                       default_subsets=tuple(s.subset_name for s in selection_specs(DEFAULT_SELECTION)),
                       preprocess="resize224", image_format="png", image_formats=FORMATS, options=OPTIONS)  # fmt: skip

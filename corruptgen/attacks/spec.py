"""Attack specs: which attacks exist, their parameters and defaults, and the ``--attacks`` syntax (no torch here).

``pgd:eps=0.04,pgd_ll:eps=0.04,cw_l2,fgsm:eps=0.02`` is a list of four attacks: an attack name, then ``:key=value``
settings; a ``key=value`` token after a comma continues the attack before it (``pgd:eps=0.04,steps=20``). ``eps`` is
the L∞ bound on [0, 1] pixels, a number in (0, 1) or a range ``LOW..HIGH`` drawn uniformly per sample. Each spec has
a subset name (``pgd_eps0_04``, ``pgd_eps0_04_steps20``, ``fgsm_eps0_0025to0_025``) under which builds and results
store it.

:data:`SELECTIONS` are the thesis's attack sets as it ran them: the transfer (black-box) attacks an ``adversarial``
build crafts on a surrogate, and the white-box ones ``corruptgen eval --attacks <name>`` runs on each model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import CorruptgenError
from ..registry import Registry

if TYPE_CHECKING:
    import numpy as np

Eps = float | tuple[float, float]

THESIS = "A. Laugros, PhD thesis, Université Grenoble Alpes, 2022"


@dataclass(frozen=True)
class AttackKind:
    """One attack: its settings with their defaults, whether it targets the least likely class, its norm."""

    name: str
    summary: str
    cite: str
    defaults: Mapping[str, Any]
    least_likely: bool = False
    norm: str = "linf"


#: Every attack by name. ``eps`` defaults to 0.04 (the thesis's §3.3.3.1 value on [0, 1] pixels).
ATTACKS: Registry[AttackKind] = Registry("attack")
for _kind in (
    AttackKind("fgsm", "one signed-gradient step of size eps", f"Goodfellow et al., ICLR 2015; {THESIS}, Eq. 2.5",
               {"eps": 0.04}),
    AttackKind("fgsm_ll", "FGSM towards the least likely class", f"Kurakin et al., ICLR 2017; {THESIS}, Eq. 2.7",
               {"eps": 0.04, "ll": "lowest"}, least_likely=True),
    AttackKind("pgd", "steps signed-gradient steps of eps/steps, projected to the eps-ball and [0, 1], no random "
               "start", f"Madry et al., ICLR 2018; {THESIS}, Eq. 2.6", {"eps": 0.04, "steps": 10}),
    AttackKind("pgd_ll", "PGD towards the least likely class", f"Kurakin et al., ICLR 2017; {THESIS}, Eq. 2.8",
               {"eps": 0.04, "steps": 10, "ll": "lowest"}, least_likely=True),
    AttackKind("mi_fgsm", "PGD on the accumulated L1-normalised gradient (momentum decay)",
               f"Dong et al., CVPR 2018; {THESIS}, §2.3.2.2", {"eps": 0.04, "steps": 10, "decay": 1.0}),
    AttackKind("cw_l2", "Carlini-Wagner L2: Adam in tanh space on ||delta||^2 + c * max(Z_t - max_{i!=t} Z_i, "
               "-kappa)", f"Carlini & Wagner, IEEE S&P 2017; {THESIS}, Eq. 2.9-2.10",
               {"c": 50.0, "kappa": 0.0, "steps": 40, "lr": 0.01}, norm="l2"),
):  # fmt: skip
    ATTACKS.register(_kind.name, _kind)

_INTS = {"steps"}
_LIMITS = {"steps": (1, 10_000), "decay": (0.0, 1e6), "c": (1e-12, 1e12), "kappa": (0.0, 1e6), "lr": (1e-12, 1e3)}
#: settings that take a word: ``ll`` is how the least likely class is chosen (:func:`corruptgen.attacks.least_likely`):
#: ``lowest``, the class of lowest score (thesis §2.3.2.2, "the class that is given the lowest score"), or ``other``,
#: the lowest among the classes other than the true one (torchattacks' least-likely mode)
_WORDS = {"ll": ("lowest", "other")}
#: settings every label names (the two readings of the thesis's CW "confidence" differ in them)
_ALWAYS_NAMED = {"cw_l2": ("c", "kappa", "steps", "lr")}


@dataclass(frozen=True)
class Selection:
    """One of the thesis's attack sets as it ran them: ``transfer`` attacks (crafted on a surrogate and stored:
    ``corruptgen build adversarial --selection``) and ``whitebox`` ones (``corruptgen eval --attacks <name>``)."""

    name: str
    transfer: str
    whitebox: str
    where: str


_ICCVW2019 = ",".join(f"{a}:eps=0.0025..0.025" for a in ("fgsm", "fgsm_ll", "pgd", "pgd_ll"))
#: §3.3.3.1 (Table 3.4c): PGD and PGD_LL (ε = 0.04) and CW_2 are white-box, MI_FGSM (ε = 0.04, 0.08) is "the"
#: black-box attack; §3.2.2 (Table 3.1): FGSM, FGSM-LL, PGD and LL-PGD "in both the black-box and white-box settings",
#: ε from [0.005, 0.05] on [−1, 1] pixels, i.e. [0.0025, 0.025] on [0, 1].
SELECTIONS: dict[str, Selection] = {
    "eccvw2020": Selection("eccvw2020", "mi_fgsm:eps=0.04,mi_fgsm:eps=0.08", "pgd:eps=0.04,pgd_ll:eps=0.04,cw_l2",
                           "§3.3.3.1, Table 3.4c"),
    "iccvw2019": Selection("iccvw2019", _ICCVW2019, _ICCVW2019, "§3.2.2, Table 3.1"),
}  # fmt: skip


def whitebox_attacks(text: str | Sequence[str | AttackSpec]) -> tuple[AttackSpec, ...]:
    """:func:`parse_attacks`, where a selection's name (``eccvw2020``) stands for its white-box attacks."""
    items = [text] if isinstance(text, str) else list(text)
    expanded: list[str | AttackSpec] = []
    for item in items:
        if isinstance(item, str):
            tokens = [t.strip() for t in item.split(",")]
            expanded.append(",".join(SELECTIONS[t].whitebox if t in SELECTIONS else t for t in tokens))
        else:
            expanded.append(item)
    return parse_attacks(expanded)


@dataclass(frozen=True)
class AttackSpec:
    """An attack with every setting resolved (defaults filled in); hashable and JSON-friendly."""

    name: str
    params: tuple[tuple[str, Any], ...]

    @property
    def kind(self) -> AttackKind:
        return ATTACKS.get(self.name)

    def get(self, key: str) -> Any:
        return dict(self.params)[key]

    @property
    def eps(self) -> Eps | None:
        """The L∞ bound (a number, or a (low, high) range drawn per sample); ``None`` for CW-L2."""
        return dict(self.params).get("eps")

    def sample_eps(self, rng: np.random.Generator) -> float | None:
        """One sample's ε: drawn uniformly from the range, else the spec's value (``None`` for CW-L2)."""
        eps = self.eps
        return float(rng.uniform(eps[0], eps[1])) if isinstance(eps, tuple) else eps

    @property
    def subset_name(self) -> str:
        """``<attack>_eps<eps>`` then ``_<key><value>`` for every other setting that is not the default."""
        parts = [self.name]
        defaults = self.kind.defaults
        for key, value in self.params:
            if key == "eps":
                parts.append("eps" + _word(value))
            elif value != defaults[key]:
                parts.append(key + _word(value))
        return "_".join(parts)

    def label(self) -> str:
        """The spec in ``--attacks`` syntax: ε and the settings off their defaults (``pgd:eps=0.04``); CW-L2 names
        every setting (``cw_l2:c=50:kappa=0:steps=40:lr=0.01``)."""
        named = _ALWAYS_NAMED.get(self.name, ())
        shown = [f"{k}={_text(v)}" for k, v in self.params if k == "eps" or k in named or v != self.kind.defaults[k]]
        return ":".join([self.name, *shown])

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.name, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}}


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return f"{_text(value[0])}..{_text(value[1])}"
    if isinstance(value, float):
        return f"{value:.10f}".rstrip("0").rstrip(".") or "0"
    return str(value)


def _word(value: Any) -> str:
    """A setting as part of a subset name: ``0.04`` -> ``0_04``, ``(0.0025, 0.025)`` -> ``0_0025to0_025``."""
    return _text(value).replace("..", "to").replace(".", "_")


def _number(attack: str, key: str, text: Any) -> float | int:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise CorruptgenError(f"attack {attack}: {key}={text!r} is not a number") from None
    if key in _INTS:
        if value != int(value):
            raise CorruptgenError(f"attack {attack}: {key} must be a whole number, got {text}")
        value = int(value)
    low, high = _LIMITS[key]
    if not low <= value <= high:
        raise CorruptgenError(f"attack {attack}: {key} must be in [{low:g}, {high:g}], got {text}")
    return value


def _eps(attack: str, text: Any) -> Eps:
    """``0.04`` or ``0.0025..0.025`` (a range drawn per sample); every bound in (0, 1)."""
    if isinstance(text, (list, tuple)):
        parts = [str(v) for v in text]
    else:
        parts = str(text).split("..")
    if len(parts) not in (1, 2):
        raise CorruptgenError(f"attack {attack}: eps must be a number or LOW..HIGH, got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise CorruptgenError(f"attack {attack}: eps must be a number or LOW..HIGH, got {text!r}") from None
    if not all(0.0 < v < 1.0 for v in values):
        raise CorruptgenError(f"attack {attack}: eps must be in (0, 1) (pixels on [0, 1]), got {text}")
    if len(values) == 2 and not values[0] < values[1]:
        raise CorruptgenError(f"attack {attack}: eps range LOW..HIGH needs LOW < HIGH, got {text}")
    return values[0] if len(values) == 1 else (values[0], values[1])


def make_attack(name: str, **settings: Any) -> AttackSpec:
    """The spec of attack ``name`` with ``settings`` checked and the other settings at their defaults."""
    kind = ATTACKS.get(name.strip())  # an unknown name fails with the near names
    name = kind.name
    unknown = sorted(set(settings) - set(kind.defaults))
    if unknown:
        raise CorruptgenError(f"attack {name} has no setting {', '.join(unknown)} (it has {', '.join(kind.defaults)})")
    params = []
    for key, default in kind.defaults.items():
        value = settings.get(key, default)
        if key == "eps":
            params.append((key, _eps(name, value)))
        elif key in _WORDS:
            if value not in _WORDS[key]:
                raise CorruptgenError(f"attack {name}: {key} must be one of {', '.join(_WORDS[key])}, got {value!r}")
            params.append((key, value))
        else:
            params.append((key, _number(name, key, value)))
    return AttackSpec(name, tuple(params))


def parse_attacks(text: str | Sequence[str | AttackSpec]) -> tuple[AttackSpec, ...]:
    """``"pgd:eps=0.04,cw_l2"`` (or a list of such strings or specs) -> specs; bad input fails in one line."""
    items = [text] if isinstance(text, str) else list(text)
    specs: list[AttackSpec] = []
    for item in items:
        specs.extend([item] if isinstance(item, AttackSpec) else _parse_one(str(item)))
    if not specs:
        raise CorruptgenError("--attacks is empty")
    names = [s.subset_name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CorruptgenError(f"--attacks names the same attack twice: {', '.join(twice)}")
    return tuple(specs)


def _parse_one(text: str) -> list[AttackSpec]:
    pending: list[tuple[str, dict[str, str]]] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        head, *settings = token.split(":")
        if "=" in head:  # key=value after a comma: more settings of the attack before it
            if not pending:
                raise CorruptgenError(f"--attacks: {token!r} comes before any attack name")
            settings = [head, *settings]
        else:
            pending.append((head, {}))
        for setting in settings:
            key, eq, value = setting.partition("=")
            if not eq or not key.strip():
                raise CorruptgenError(f"--attacks: expected key=value after the attack name, got {setting!r}")
            pending[-1][1][key.strip()] = value.strip()
    return [make_attack(name, **settings) for name, settings in pending]

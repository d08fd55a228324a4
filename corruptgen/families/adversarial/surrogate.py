"""The surrogate model of a transfer set: loaded once per process and device, checked to be differentiable, its
weights hashed, and run in float64.

float64 makes the crafted bytes a property of the model, not of the hardware: a gradient sign decided in float32
can flip with the summation order (thread count, batch composition, CPU or CUDA kernels), and one flip moves a pixel
by two PGD steps. In float64 those differences are ~1e-16 of a gradient, far below any component's size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ...errors import CorruptgenError
from ...models.labels import LabelSpace, model_label_space

DEFAULT_SURROGATE = "efficientnet_lite0"


@dataclass(frozen=True)
class Surrogate:
    """A loaded surrogate: its :class:`~corruptgen.attacks.Classifier` (float64), name, spec and weights' sha256."""

    classifier: object
    name: str
    spec: str
    sha256: str
    num_classes: int
    space: LabelSpace | None = None  # the classes its outputs index (corruptgen.models.labels)


def canonical_spec(spec: str | None) -> str:
    """The spec as recorded in the plan: the default when unset, a TorchScript path made absolute."""
    import os

    spec = (spec or DEFAULT_SURROGATE).strip()
    if spec.startswith("torchscript:"):
        return "torchscript:" + os.path.abspath(os.path.expanduser(spec.split(":", 1)[1]))
    return spec


@functools.lru_cache(maxsize=4)
def load_surrogate(spec: str, device: str = "cpu") -> Surrogate:
    """Load ``spec`` (anything :func:`corruptgen.models.load_model` takes) on ``device``; one line on failure."""
    import torch

    from ...attacks import differentiable
    from ...models import load_model, weights_sha256

    try:
        model = load_model(spec, device)
    except CorruptgenError as e:
        raise CorruptgenError(f"--surrogate {spec}: {e}") from None
    except Exception as e:  # a factory that raises, a broken file: one line, never a traceback
        raise CorruptgenError(f"--surrogate {spec} cannot be loaded: {type(e).__name__}: {e}") from None
    if model.module is None:
        raise CorruptgenError(f"--surrogate {spec}: a torch module is needed (attacks run it in float64), "
                              f"got a {type(model.forward).__name__}")  # fmt: skip
    sha = weights_sha256(model)
    model.module.to(dtype=torch.float64)
    from ...quality.vif import one_torch_thread

    with one_torch_thread(), torch.no_grad():
        classifier = differentiable(model, "surrogate", torch.float64)
        classes = classifier(torch.zeros(1, 3, classifier.size, classifier.size, dtype=torch.float64,
                                         device=device)).shape[1]  # fmt: skip
    return Surrogate(classifier, model.name, spec, str(sha), int(classes), model_label_space(model, int(classes)))

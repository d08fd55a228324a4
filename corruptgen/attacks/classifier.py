"""A model as attacks see it: differentiable logits of float images on [0, 1], the model's own input normalisation
(and, when the images are not of its input size, its resize) applied inside."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import CorruptgenError
from ..models.loading import EvalModel


class Classifier:
    """``classifier(x)``: logits (N, C) of ``x`` float (N, 3, H, W) on [0, 1], on the model's device.

    Computes ``forward((resize(x) − mean) / std)``, the same input :meth:`EvalModel.preprocess` gives a uint8 image,
    keeping the graph so gradients reach ``x``, in ``dtype`` (the module's own: a float64 module takes float64 images).
    The module must be in eval mode (loaded models are). On the CPU a float32 input is handed over channels-last
    (oneDNN's convolutions, forward and backward, run ~20 % faster so; float64 ones run faster contiguous).
    """

    def __init__(self, model: EvalModel, dtype: torch.dtype = torch.float32) -> None:
        self.model = model
        device = model.device
        self.name = model.name
        self.mean = torch.tensor(model.mean, dtype=dtype, device=device).view(1, 3, 1, 1)
        self.std = torch.tensor(model.std, dtype=dtype, device=device).view(1, 3, 1, 1)
        self.size = model.input_size
        self.channels_last = self.mean.device.type == "cpu" and dtype == torch.float32

    @property
    def device(self) -> torch.device:
        return self.mean.device

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-2:] != (self.size, self.size):
            x = F.interpolate(x, size=(self.size, self.size), mode="bilinear", align_corners=False, antialias=True)
        x = (x - self.mean) / self.std
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        out = self.model.forward(x)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[0] != x.shape[0]:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise CorruptgenError(f"returned {shape}, not (N, classes) logits of torch")
        return out.to(self.mean.dtype)

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """Top-1 classes (N,) of ``x`` on [0, 1]."""
        return self(x).argmax(1)


def differentiable(model: EvalModel, role: str = "model", dtype: torch.dtype = torch.float32) -> Classifier:
    """The :class:`Classifier` of ``model``, after checking that a gradient reaches its input (one forward and
    backward pass of a grey image); a model that returns no graph, or non-finite gradients, fails in one line."""
    classifier = Classifier(model, dtype)
    x = torch.full((1, 3, classifier.size, classifier.size), 0.5, dtype=dtype, device=classifier.device,
                   requires_grad=True)  # fmt: skip
    try:
        with torch.enable_grad():
            out = classifier(x)
            if not out.requires_grad:
                raise CorruptgenError("not differentiable: its output carries no gradient (it leaves torch, or runs "
                                      "under no_grad)")  # fmt: skip
            (grad,) = torch.autograd.grad(out.logsumexp(1).sum(), x)
    except CorruptgenError as e:  # not a classifier's output, or no graph
        raise CorruptgenError(f"{role} {model.name}: {e}") from None
    except Exception as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CorruptgenError(f"{role} {model.name} is not differentiable: {reason}") from None
    if not bool(torch.isfinite(grad).all()):
        raise CorruptgenError(f"{role} {model.name} is not differentiable: non-finite input gradients")
    return classifier

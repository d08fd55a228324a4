"""Crafting the samples of one subset: the surrogate's clean decision, the attack, storage within ε (8 bits, or
float32 for ``--format npy``), and what was stored: its distance to the stored clean twin and the surrogate's
decision on it.

On the CPU every image is attacked alone on one torch thread (float results then depend on nothing but the image and
the model: not on the batch, the worker or the machine's thread count); on CUDA the batch is attacked at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...attacks.spec import AttackSpec
from .surrogate import load_surrogate

#: the storage formats whose bytes differ from the 8-bit image given to them
LOSSY = ("jpg", "webp")


def craft_batch(spec: AttackSpec, surrogate_spec: str, sha256: str, images: np.ndarray,
                rngs: Sequence[np.random.Generator], labels: Sequence[int | None], device: str = "cpu",
                image_format: str = "png", quality: int = 85,
                ) -> tuple[list[np.ndarray], list[dict[str, Any]]]:  # fmt: skip
    """Adversarial images (uint8 (H, W, 3); float32 on [0, 1] for ``image_format="npy"``) and their parameters for
    uint8 ``images`` (N, H, W, 3) of ``labels`` (``None``: unlabelled, the surrogate's clean decision is attacked)."""
    if device.startswith("cuda"):
        return _craft(spec, surrogate_spec, sha256, images, rngs, labels, device, image_format, quality)
    outs: list[np.ndarray] = []
    params: list[dict[str, Any]] = []
    from ...quality.vif import one_torch_thread

    with one_torch_thread():
        for i in range(len(images)):
            one = slice(i, i + 1)
            out, prm = _craft(spec, surrogate_spec, sha256, images[one], rngs[one], labels[one], "cpu", image_format,
                              quality)  # fmt: skip
            outs += out
            params += prm
    return outs, params


def _as_stored(images, image_format: str, quality: int):
    """uint8 (N, H, W, 3) images as a reader decodes them from ``image_format`` (float64 on [0, 1])."""
    import torch

    if image_format in LOSSY:
        from ...io.codec import encode_image
        from ...io.decode import decode_image

        images = torch.from_numpy(np.stack([decode_image(encode_image(im, image_format, quality))[0]
                                            for im in images.cpu().numpy()])).to(images.device)  # fmt: skip
    return images.to(torch.float64) / 255


def _craft(spec, surrogate_spec, sha256, images, rngs, labels, device, image_format, quality):
    import torch

    from ...attacks import NOISE_LEVELS, clean_float32, craft, to_float32, to_uint8
    from ...errors import CorruptgenError

    surrogate = load_surrogate(surrogate_spec, device)
    if surrogate.sha256 != sha256:
        raise CorruptgenError(f"surrogate {surrogate_spec} changed since the plan was made (weights sha256 "
                              f"{surrogate.sha256[:12]}…, plan has {sha256[:12]}…)")  # fmt: skip
    eps = [spec.sample_eps(rng) for rng in rngs]
    model = surrogate.classifier
    clean = torch.from_numpy(np.require(images, requirements=("C", "W"))).to(device)  # decoded inputs are read-only
    x = clean.permute(0, 3, 1, 2).to(torch.float64) / 255
    before = model.predict(x)
    given = [None if label is None or int(label) < 0 else int(label) for label in labels]
    for label in given:
        if label is not None and label >= surrogate.num_classes:
            raise CorruptgenError(f"label {label} is outside the {surrogate.num_classes} classes of the surrogate")
    attacked = torch.tensor([b if g is None else g for g, b in zip(given, before.tolist(), strict=True)],
                            device=x.device)  # fmt: skip
    crafted = craft(spec, model, x, attacked, eps=None if spec.eps is None else eps)
    made = (crafted.images - x).flatten(1)
    if image_format == "npy":
        stored = to_float32(crafted.images, clean, crafted.eps)
        seen, twin = stored.to(torch.float64), clean_float32(clean).to(torch.float64)
    else:
        stored = to_uint8(crafted.images, clean, crafted.eps)
        seen, twin = _as_stored(stored, image_format, quality), _as_stored(clean, image_format, quality)
    diff = (seen - twin).flatten(1)
    after = model.predict(seen.permute(0, 3, 1, 2))
    params = []
    for i in range(len(images)):
        p: dict[str, Any] = {"attack": spec.name, **({"eps": eps[i]} if spec.eps is not None else {})}
        p["iterations"] = dict(spec.params).get("steps", 1)
        p.update({k: v for k, v in spec.params if k not in ("eps", "steps")})
        if crafted.targets is not None:
            p["target"] = int(crafted.targets[i])
        unchanged = not bool(diff[i].any())
        changed = float(made[i].abs().max()) * 255 > NOISE_LEVELS
        p.update(label=int(attacked[i]), label_source="source" if given[i] is not None else "surrogate",
                 surrogate_pred_clean=int(before[i]), surrogate_pred_adv=int(after[i]),
                 fooled_surrogate=int(after[i]) != int(attacked[i]),
                 surrogate_wrong_clean=int(before[i]) != int(attacked[i]),
                 linf=float(made[i].abs().max()), l2=float(made[i].square().sum().sqrt()),
                 linf_stored=float(diff[i].abs().max()), l2_stored=float(diff[i].square().sum().sqrt()),
                 stored_unchanged=unchanged,
                 unchanged_reason=_why(spec, eps[i], image_format, changed, int(before[i]) != int(attacked[i]))
                 if unchanged else None)  # fmt: skip
        params.append(p)
    return list(stored.cpu().numpy()), params


def _why(spec: AttackSpec, eps: float | None, image_format: str, changed: bool, misclassified: bool) -> str:
    """Why a stored adversarial image equals its clean twin (one line, kept in the sample's json)."""
    from ...attacks import grey_levels

    if not changed:
        if spec.name != "cw_l2":
            return "the attack changed no pixel (its loss gradient is zero on this image)"
        if misclassified:
            return ("the surrogate already misclassifies the clean image, so CW's smallest misclassified iterate is "
                    "the clean image itself")  # fmt: skip
        return f"no CW iterate fooled the surrogate within {spec.get('steps')} steps: CW keeps the clean image"
    if image_format != "npy" and eps is not None and grey_levels(eps) == 0:
        return (f"eps = {eps:.4g} is below one grey level (1/255): no 8-bit image within eps differs from the clean "
                "one (--format npy stores it)")  # fmt: skip
    if image_format in LOSSY:
        return f"the {image_format} codec erased the perturbation (--format png or npy keep it)"
    return "storing erased the perturbation"

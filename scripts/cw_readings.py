"""What the two readings of the thesis's CW "confidence score of 50" (§3.3.3.1) change: c = 50 with κ = 0 (the preset
``cw_l2``: the thesis calls c the confidence, §2.3.2.2) against κ = 50 (Carlini & Wagner's confidence).

Each image is attacked white-box, away from the model's own clean decision (float32, one torch thread), and stored in
8 bits as the adversarial family stores it (``corruptgen.attacks.to_uint8``). Prints one Markdown table row per
reading: how many stored images fool the model, how many are stored identical to the clean image (CW keeps the clean
image when no iterate reaches margin κ), and over the others the medians of the logit margin max_{i≠t} Z_i − Z_t and
of the L2 norm (on [0, 1]) and L∞ norm (grey levels) of the attack's perturbation.

    python scripts/cw_readings.py                           # EfficientNet-Lite0, six sample photos at 224 px
    python scripts/cw_readings.py --model timm:resnet50 --readings cw_l2,cw_l2:kappa=50,cw_l2:kappa=10
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PHOTOS = ("chelsea", "coffee", "rocket", "astronaut", "camera", "hubble_deep_field")
READINGS = "cw_l2,cw_l2:kappa=50,cw_l2:c=1,kappa=50"


def photos(names: list[str], size: int):
    """The sample photos as uint8 (N, size, size, 3), resized as the thesis does (224 px at ``size`` 224)."""
    import numpy as np
    import skimage.data

    from corruptgen.family.preprocess import get_preprocess

    resize = get_preprocess("resize224")
    resize = resize if size == 224 else resize.scaled(size)
    out = []
    for name in names:
        image = getattr(skimage.data, name)()
        image = np.stack([image] * 3, axis=-1) if image.ndim == 2 else image[..., :3]
        out.append(resize(image))
    return np.stack(out)


def rows(model_spec: str, readings: str, names: list[str], size: int) -> list[list[str]]:
    """One table row per reading (see the module)."""
    import torch

    from corruptgen.attacks import Classifier, craft, parse_attacks, to_uint8
    from corruptgen.models import load_model

    torch.set_num_threads(1)
    model = Classifier(load_model(model_spec))
    clean = torch.from_numpy(photos(names, size))
    x = clean.permute(0, 3, 1, 2).float() / 255
    labels = model.predict(x)
    out = []
    for spec in parse_attacks(readings):
        adversarial = craft(spec, model, x, labels).images
        stored = to_uint8(adversarial, clean, None)
        fooled = int((model.predict(stored.permute(0, 3, 1, 2).float() / 255) != labels).sum())
        same = int((stored == clean).flatten(1).all(1).sum())
        with torch.no_grad():
            logits = model(adversarial)
        true = logits.gather(1, labels.view(-1, 1))[:, 0]
        margin = logits.scatter(1, labels.view(-1, 1), float("-inf")).amax(1) - true
        delta = (adversarial - x).flatten(1)
        moved = [i for i in range(len(names)) if not bool((stored[i] == clean[i]).all())]

        def median(values, digits: int, kept=moved) -> str:
            return f"{statistics.median([float(values[i]) for i in kept]):.{digits}f}" if kept else "–"

        n = len(names)
        out.append([f"`{spec.label()}`", f"{fooled}/{n}", f"{same}/{n}", median(margin, 1),
                    median(delta.norm(dim=1), 2), median(delta.abs().amax(1) * 255, 0)])  # fmt: skip
    return out


def table(body: list[list[str]]) -> str:
    head = ["reading", "stored images fooling the model", "stored identical to clean (no iterate reached κ)",
            "margin (logits)", "L2", "L∞ (grey levels)"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in body)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="efficientnet_lite0", help="any corruptgen model spec")
    parser.add_argument("--readings", default=READINGS, help=f"CW attacks to compare (default {READINGS})")
    parser.add_argument("--photos", default=",".join(PHOTOS), help="skimage.data sample photos")
    parser.add_argument("--size", type=int, default=224, help="image side after the thesis's resize (default 224)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.photos.split(",") if n.strip()]
    print(
        f"{args.model}, {len(names)} photos at {args.size} px, white-box, float32, stored in 8 bits "
        "(medians over the images stored changed):\n"
    )
    print(table(rows(args.model, args.readings, names, args.size)))


if __name__ == "__main__":
    main()

"""A small-image variant of ImageNet-C as a benchmark family: the 19 corruptions of a :class:`~..imagenet_c.Spec`
× 5 severities (subsets ``<corruption>_s<severity>``) + clean, selected like ImageNet-C (``--severities``,
``--extra``). Used by the CIFAR-10-C, CIFAR-100-C, Tiny-ImageNet-C and ImageNet-64×64-C folders."""

from __future__ import annotations

from ...family.benchmark import CLEAN, Option
from ...family.plan import Subset
from ...family.preprocess import PRESETS, Preprocess
from ..imagenet_c import Spec
from ..imagenet_c.benchmark import CATEGORY_NAMES, COMMON, EXTRA, GROUP_OF, SEVERITIES, ImageNetC

#: Metric family of these builds: CE / mCE against a reference results file (no AlexNet errors were published).
METRICS = "c_reference"


def resize_preset(size: int) -> str:
    """Register (once) and name the preset ``resize<size>``: torchvision ``Resize((size, size))`` on PIL images
    (bilinear, aspect not kept), as the 64 px reference scripts do; inputs already size × size are left untouched."""
    name = f"resize{size}"
    PRESETS.setdefault(name, Preprocess(name=name, resize=(size, size), crop=None, interpolation="bilinear",
                                        library="pil"))  # fmt: skip
    return name


def variant(name: str, spec: Spec, *, title: str, cite: str, size: int, all_by_default: bool,
            image_format: str = "jpg") -> ImageNetC:  # fmt: skip
    """The family ``name`` rendering ``<spec.family>/<corruption>``; by default the 15 common corruptions, or all 19
    when the released set has them all (``all_by_default``); shards in ``image_format`` unless ``--format`` says."""
    subsets = {"clean": CLEAN}
    for corruption in COMMON + EXTRA:
        for s in SEVERITIES:
            subsets[f"{corruption}_s{s}"] = Subset(
                name=f"{corruption}_s{s}", corruption=f"{spec.family}/{corruption}", severity=s,
                category=GROUP_OF[corruption], options=(("severity", s),),
            )  # fmt: skip
    defaults = COMMON + EXTRA if all_by_default else COMMON
    extra = " (default: all 19 already)" if all_by_default else ""
    return ImageNetC(
        options=(
            Option("severities", "severities to build, e.g. 1,3,5 or 1..5 (default all)"),
            Option(
                "extra",
                f"also the 4 held-out corruptions (speckle_noise, gaussian_blur, spatter, saturate){extra}",
                "flag",
            ),
        ),
        category_names=CATEGORY_NAMES,
        name=name,
        title=title,
        cite=cite,
        subsets=subsets,
        default_subsets=tuple(f"{c}_s{s}" for c in defaults for s in SEVERITIES),
        preprocess=resize_preset(size),
        metrics=METRICS,
        image_format=image_format,
    )

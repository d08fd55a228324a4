"""``samples`` source: real photographs bundled with scikit-image (no download)."""

from __future__ import annotations

from functools import cache

from corruptgen.io.decode import BadImageError
from corruptgen.io.labels import NUM_CLASSES, imagenet_names

from .base import Source, SourceItem, _one_line

# (name, ImageNet-1k label or None); keep this order, it is the deterministic order of the source.
_SAMPLES: tuple[tuple[str, int | None], ...] = (
    ("astronaut", None),
    ("chelsea", 281),  # tabby cat
    ("coffee", 967),  # espresso
    ("rocket", 657),  # missile
    ("stereo_motorcycle", 670),  # left frame; motor scooter is the closest ImageNet class
    ("hubble_deep_field", None),
    ("immunohistochemistry", None),
    ("retina", None),
    ("camera", None),  # greyscale
    ("clock", 409),  # greyscale; analog clock
)

#: the file scikit-image's ``skimage.data.<name>()`` reads (bundled with it), read here with PIL: the same arrays
#: without importing ``skimage.io`` (~0.4 CPU-s, every build process)
_FILES = {"astronaut": "astronaut.png", "chelsea": "chelsea.png", "coffee": "coffee.png", "rocket": "rocket.jpg",
          "stereo_motorcycle": "motorcycle_left.png", "hubble_deep_field": "hubble_deep_field.jpg",
          "immunohistochemistry": "ihc.png", "retina": "retina.jpg", "camera": "camera.png",
          "clock": "clock_motion.png"}  # fmt: skip


class SamplesSource(Source):
    """Real photographs bundled with scikit-image, served as arrays (``read``: as lossless PNG bytes)."""

    kind = "samples"
    arrays = True

    def __init__(self, spec: str = "samples", *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.labelled, self.num_classes = True, NUM_CLASSES

    def _scan(self) -> list[SourceItem]:
        names = imagenet_names()
        return [
            SourceItem(name, f"skimage:{name}", label, None if label is None else names[label])
            for name, label in _SAMPLES
        ]

    def identity(self, index: int) -> str:
        """The scikit-image version the photograph comes with."""
        return _skimage_version()

    def _read_array(self, index: int, max_bytes: int):
        import importlib.resources

        import numpy as np
        from PIL import Image

        name = self._items[index].key
        try:
            with Image.open(importlib.resources.files("skimage.data") / _FILES[name]) as image:
                data = np.asarray(image)
        except Exception as exc:
            raise BadImageError(f"cannot load scikit-image sample {name}: {_one_line(exc)}") from exc
        return np.ascontiguousarray(data)


@cache
def _skimage_version() -> str:
    from importlib.metadata import version

    return f"scikit-image {version('scikit-image')}"

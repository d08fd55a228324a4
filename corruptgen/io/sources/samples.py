"""``samples`` source: real photographs bundled with scikit-image (no download)."""

from __future__ import annotations

from corruptgen.io.decode import BadImageError
from corruptgen.io.labels import NUM_CLASSES, imagenet_names

from .base import Source, SourceItem, _one_line, array_png

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


class SamplesSource(Source):
    """Real photographs bundled with scikit-image, served as lossless PNG bytes."""

    kind = "samples"

    def __init__(self, spec: str = "samples", *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.labelled, self.num_classes = True, NUM_CLASSES

    def _scan(self) -> list[SourceItem]:
        names = imagenet_names()
        return [
            SourceItem(name, f"skimage:{name}", label, None if label is None else names[label])
            for name, label in _SAMPLES
        ]

    def _read(self, index: int, max_bytes: int) -> bytes:
        import numpy as np
        import skimage.data

        name = self._items[index].key
        try:
            data = getattr(skimage.data, name)()
        except Exception as exc:
            raise BadImageError(f"cannot load scikit-image sample {name}: {_one_line(exc)}") from exc
        return array_png(np.ascontiguousarray(data[0] if isinstance(data, tuple) else data))

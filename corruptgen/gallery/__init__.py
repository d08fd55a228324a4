"""A browsable static gallery of a build: ``corruptgen gallery BUILD`` or ``corruptgen.gallery(BUILD)``.

>>> import corruptgen
>>> corruptgen.gallery("corruptgen-out/imagenet-c").index  # doctest: +SKIP
PosixPath('corruptgen-out/imagenet-c-gallery/index.html')
"""

from .api import GalleryResult, default_out, gallery

__all__ = ["GalleryResult", "default_out", "gallery"]

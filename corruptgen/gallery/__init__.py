"""A browsable static gallery of a build: ``corruptgen gallery BUILD`` or ``corruptgen.gallery(BUILD)``.

>>> import corruptgen
>>> corruptgen.gallery("corruptgen-out/imagenet-c").index  # doctest: +SKIP
PosixPath('corruptgen-out/imagenet-c-gallery/index.html')

Only this function loads with ``import corruptgen``; the rest (:mod:`.api`) loads on first use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .api import GalleryResult


def gallery(
    build: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    per_subset: int = 3,
    results: Sequence[str | os.PathLike] = (),
    verify: bool = True,
    progress: bool = False,
) -> GalleryResult:
    """Write the gallery of ``build`` (a local folder, an fsspec URL or a Hub id) to ``out`` (default:
    ``<build>-gallery`` next to a local build, ``./<name>-gallery`` for a remote one): ``per_subset`` thumbnails per
    cell; ``results`` are ``corruptgen eval`` results files of this build; ``verify`` re-hashes every shard for the
    facts (off: the facts say the build was not verified)."""
    from .api import write_gallery

    return write_gallery(build, out, per_subset, results, verify, progress)


_WHERE = {"GalleryResult": ".api", "default_out": ".api"}
__all__ = ["gallery", *sorted(_WHERE)]
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

"""Export a build as a folder tree: ``corruptgen export BUILD --layout imagenet-c --out DIR``.

>>> from corruptgen.export import export_build
>>> export_build("corruptgen-out/imagenet-c", "ImageNet-C").summary()  # doctest: +SKIP

Layouts are a registry (:data:`LAYOUTS`); a family folder adds its own with :func:`register_layout`.
"""

from .api import export_build, select_subsets
from .layouts import LAYOUTS, Layout, register_layout
from .outdir import ExportDir, ExportReport

__all__ = ["LAYOUTS", "ExportDir", "ExportReport", "Layout", "export_build", "register_layout", "select_subsets"]

"""corruptgen: render corruption-robustness benchmarks as WebDataset shards.

>>> import corruptgen
>>> corruptgen.corruptions.get("solarize")(image, rng)  # doctest: +SKIP
>>> corruptgen.build("syn2nat", out="corruptgen-out")  # doctest: +SKIP
>>> corruptgen.gallery("corruptgen-out/syn2nat")  # doctest: +SKIP
"""

from . import _no_update_checks  # noqa: F401, I001 (first: before any import of albumentations)
from . import augment, corruptions
from ._version import __version__
from .api import build, make_plan
from .engine.run import BuildResult, render
from .errors import CorruptgenError
from .family.benchmark import get_benchmark, list_benchmarks
from .gallery import gallery  # the function; its package corruptgen.gallery loads the rest on first use
from .hub import load, torch_loader
from .engine.manifest import load_manifest, verify
from .engine.options import RayOptions, RunOptions
from .family.plan import Plan, SourceSpec, Subset

__all__ = [
    "BuildResult",
    "CorruptgenError",
    "Plan",
    "RayOptions",
    "RunOptions",
    "SourceSpec",
    "Subset",
    "__version__",
    "augment",
    "build",
    "corruptions",
    "gallery",
    "get_benchmark",
    "list_benchmarks",
    "load",
    "load_manifest",
    "make_plan",
    "render",
    "torch_loader",
    "verify",
]

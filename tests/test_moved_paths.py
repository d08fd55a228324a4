"""Import paths documented before families became folders keep working (one module object, a DeprecationWarning)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

OLD_TO_NEW = [
    ("corruptgen.optics", "corruptgen.families.opticsbench"),
    ("corruptgen.optics.kernelio", "corruptgen.families.opticsbench.kernelio"),
    ("corruptgen.corruptions.imagenet_c", "corruptgen.families.imagenet_c"),
    ("corruptgen.corruptions.vcr.domains", "corruptgen.families.vcr.domains"),
    ("corruptgen.corruptions.vcr.search", "corruptgen.families.vcr.search"),
    ("corruptgen.benchmarks", "corruptgen.family"),
    ("corruptgen.benchmarks.imagenet_c", "corruptgen.families.imagenet_c.benchmark"),
    ("corruptgen.hub.build", "corruptgen.reader"),
    ("corruptgen.eval.models", "corruptgen.models.loading"),
]


@pytest.mark.parametrize(("old", "new"), OLD_TO_NEW)
def test_old_path_is_the_new_module(old, new):
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({new!r})\n"
        "assert old is new, (old, new)\n"
        f"assert new.__spec__.name == {new!r}\n"
        "assert any(issubclass(x.category, DeprecationWarning) for x in w)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_documented_function_paths():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from corruptgen.corruptions.imagenet_c import gaussian_noise
        from corruptgen.optics import psf_conv

    assert gaussian_noise is importlib.import_module("corruptgen.families.imagenet_c").gaussian_noise
    assert callable(psf_conv)

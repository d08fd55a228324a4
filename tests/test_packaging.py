"""The wheel ships what an installed corruptgen reads: every family folder, the kernel stacks and the card templates
(the repository's top-level ``kernels/`` and ``cards/`` become ``corruptgen.kernels`` / ``corruptgen.cards``)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_families_kernels_and_cards(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)  # fmt: skip
    (wheel,) = tmp_path.glob("corruptgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for kernel in (ROOT / "kernels").glob("*.npz"):
        assert f"corruptgen/kernels/{kernel.name}" in names
    for card in (ROOT / "cards").glob("*.md"):
        assert f"corruptgen/cards/{card.name}" in names
    for family in (ROOT / "corruptgen" / "families").iterdir():
        if (family / "__init__.py").exists():
            assert f"corruptgen/families/{family.name}/__init__.py" in names
    assert {"corruptgen/gallery/static/gallery.js", "corruptgen/gallery/static/gallery.css"} <= names
    assert not any(n.startswith(("tests/", "kernels/", "cards/")) for n in names)


def test_the_suite_runs_with_a_per_test_timeout(pytestconfig):
    """A hanging test fails after pyproject's ``timeout`` (pytest-timeout, part of the test extra), naming itself."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert 60 <= float(pytestconfig.getini("timeout")) <= 600

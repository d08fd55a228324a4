"""Packages whose names load on first use (corruptgen.lazy): importing them does not import torch, a submodule of
an export's name does not replace the export, and the names are listed."""

from __future__ import annotations

import subprocess
import sys


def test_lazy_packages_import_without_torch_and_keep_their_exports():
    code = (
        "import sys\n"
        "import corruptgen.eval, corruptgen.quality, corruptgen.families.opticsbench as ob\n"
        "import corruptgen.attacks, corruptgen.models, corruptgen.families.adversarial\n"
        "from corruptgen.attacks import parse_attacks  # the --attacks syntax needs no torch\n"
        "assert 'torch' not in sys.modules\n"
        "import corruptgen.quality.vif  # binds the submodule on the package: the function stays\n"
        "from corruptgen.quality import vif, VIFReference\n"
        "assert callable(vif) and not isinstance(vif, type(sys)), vif\n"
        "assert {'vif', 'vif_p', 'SteerablePyramid'} <= set(dir(corruptgen.quality))\n"
        "assert {'evaluate', 'collect'} <= set(dir(corruptgen.eval)) and 'psf_conv' in dir(ob)\n"
        "assert corruptgen.eval.evaluate is corruptgen.eval.evaluate\n"
        "try:\n"
        "    corruptgen.eval.nothing\n"
        "except AttributeError as e:\n"
        "    assert 'nothing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

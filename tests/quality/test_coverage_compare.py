"""``corruptgen coverage BUILD_A BUILD_B``: the Δv distributions of the functions an ImageNet-C and a VCR build of the
sample photos share (VCR App. D, Fig. 11), with Δv computed against the clean twin for ImageNet-C, bounded."""

from __future__ import annotations

import json

import numpy as np
import pytest

import corruptgen
from corruptgen.cli import main
from corruptgen.quality.coverage_compare import compare_builds, function_name


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = tmp_path_factory.mktemp("builds")
    corruptgen.build("imagenet-c", out=out, subsets="gaussian_noise_s1,gaussian_noise_s5,brightness_s3,contrast_s2",
                     limit=2, progress=False, card=False)  # fmt: skip
    corruptgen.build("vcr", out=out, subsets="gaussian_noise,brightness", limit=2, per_image=2, progress=False,
                     card=False)  # fmt: skip
    return out / "imagenet-c", out / "vcr"


def test_shared_functions_and_computed_delta_v(builds):
    inc, vcr = builds
    labels, rows, only = compare_builds(inc, vcr)
    assert labels == ["imagenet-c", "vcr"] and [r.function for r in rows] == ["gaussian_noise", "brightness"]
    assert only == {"imagenet-c": ["contrast"], "vcr": []}  # ImageNet-C's contrast is no VCR function
    noise = rows[0]
    assert noise.a.n == 4 and noise.a.source == "computed"  # 2 severities x 2 photos, VIF against the clean twin
    assert noise.b.n == 4 and noise.b.source == "stored"  # 2 photos x --per-image 2
    assert np.all((noise.a.values > 0) & (noise.a.values < 1)) and noise.a.counts.sum() == 4
    # severity 5 changes more than severity 1 on each photo
    assert noise.a.values[2:].min() > noise.a.values[:2].max()
    assert function_name("imagenet_c/gaussian_noise") == function_name("vcr/gaussian_noise") == "gaussian_noise"


def test_cli_table_plot_json_and_the_bound(builds, tmp_path, capsys):
    inc, vcr = builds
    argv = ["coverage", str(inc), str(vcr), "--plot", str(tmp_path / "fig11.png"), "--json", str(tmp_path / "c.json")]
    assert main([*argv, "--max-computed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "gaussian_noise" in printed and "only in imagenet-c: contrast" in printed
    assert (tmp_path / "fig11.png").stat().st_size > 0
    data = json.loads((tmp_path / "c.json").read_text())
    noise = data["functions"][0]
    # one of the 2 samples of each severity is measured; the other is counted, not scored
    assert noise["imagenet-c"]["n"] == 2 and noise["imagenet-c"]["not_measured"] == 2 and noise["vcr"]["n"] == 4
    assert main(["coverage", str(inc), str(vcr), str(vcr)]) == 2
    assert main(["coverage", str(inc), str(vcr), "--by", "corruption"]) == 2
    assert "one build" in capsys.readouterr().err

"""The simulation tables of docs/vcr.md (band coverage, similarity false alarms and power) are their scripts' output
for a saved run, not hand-typed; and one simulated table of each script runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REGIONS = {"vcr-band-coverage": ("vcr_band_coverage", "vcr_band_coverage.json"),
           "vcr-similarity-power": ("vcr_similarity_power", "vcr_similarity_power.json")}  # fmt: skip


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("region", sorted(REGIONS))
def test_each_region_is_the_script_output_of_its_saved_run(region):
    script, saved = REGIONS[region]
    common = _script("bench_common")
    page = (REPO / "docs" / "vcr.md").read_text()
    result = json.loads((REPO / "docs" / "bench" / saved).read_text())
    assert common.read_region(page, region) == _script(script).table(result)


def test_one_simulated_table_of_each_script():
    coverage = _script("vcr_band_coverage").one_table(("late drop", 1000, 0))
    assert len(coverage["pointwise"]) == 101 and isinstance(coverage["simultaneous"], bool)
    assert 0 < coverage["width"] < coverage["simultaneous_width"] < 0.2
    power = _script("vcr_similarity_power").one_replicate((1000, 0))
    assert set(power) == {"0.0", "0.05", "0.1"} and set(power["0.1"]) == {"simultaneous", "pointwise", "bands overlap"}

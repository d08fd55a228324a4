"""Every table of docs/benchmarks.md and docs/cifar_c.md is its script's output for a saved result, not hand-typed."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_peers, bench_common = _script("bench_peers"), _script("bench_common")
PAGE = (REPO / "docs" / "benchmarks.md").read_text()
#: region name -> (script, saved result): what writes each <!-- bench:NAME --> region
REGIONS = {"floor": ("bench_floor", "floor.json"), "scripts": ("bench_docs", "scripts.json"),
           "conv-kernels": ("bench_conv_kernels", "conv_kernels.json"),
           "cifar-render": ("bench_cifar_render", "cifar_render.json"),
           "hsv-table": ("bench_hsv_table", "hsv_table.json"),
           "on-the-fly": ("bench_on_the_fly", "on_the_fly.json"),
           "scaling": ("bench_scaling", "scaling.json")}  # fmt: skip


@pytest.mark.parametrize("size", [224, 64, 32])
def test_each_peer_table_is_the_script_output_of_its_saved_run(size):
    results = json.loads((REPO / "docs" / "bench_peers" / f"peers_{size}.json").read_text())
    region = re.search(rf"<!-- bench_peers:{size} -->\n(.*?)\n<!-- /bench_peers:{size} -->", PAGE, re.DOTALL)
    assert region, f"no region for {size}"
    assert region.group(1) == bench_peers.table(results)


def test_write_region_replaces_only_between_the_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- bench_peers:x -->\nold\n<!-- /bench_peers:x -->\nb\n")
    bench_peers.write_region(page, "x", "new\ntable")
    assert page.read_text() == "a\n<!-- bench_peers:x -->\nnew\ntable\n<!-- /bench_peers:x -->\nb\n"


@pytest.mark.parametrize("page", ["benchmarks.md", "cifar_c.md"])
def test_each_region_is_the_script_output_of_its_saved_run(page):
    text = (REPO / "docs" / page).read_text()
    names = re.findall(r"<!-- bench:([\w-]+) -->\n", text)
    assert set(names) <= set(REGIONS), f"a region no script writes: {set(names) - set(REGIONS)}"
    for name in names:
        script, saved = REGIONS[name]
        result = json.loads((REPO / "docs" / "bench" / saved).read_text())
        assert bench_common.read_region(text, name) == _script(script).table(result), name
    if page == "benchmarks.md":
        assert set(names) == set(REGIONS)
    else:
        assert names == ["cifar-render"]

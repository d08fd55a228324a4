"""The peer tables of docs/benchmarks.md are the script's output for the saved results, not hand-typed numbers."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("bench_peers", REPO / "scripts" / "bench_peers.py")
bench_peers = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench_peers)
PAGE = (REPO / "docs" / "benchmarks.md").read_text()


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

"""Refactors keep bytes: every pinned image/label member of a small build of each family equals the recorded hash."""

from __future__ import annotations

import pytest
from golden_builds import GOLDEN, RECIPES, build_hashes, plan_ids


@pytest.mark.parametrize("family", sorted(RECIPES))
def test_build_members_equal_recorded_hashes(family, tmp_path):
    import json

    expected = json.loads(GOLDEN.read_text())[family]
    got = build_hashes(family, tmp_path)
    assert sorted(got) == sorted(expected)
    changed = [k for k in expected if got[k] != expected[k]]
    assert not changed, f"{len(changed)} of {len(expected)} members changed, e.g. {changed[:3]}"


def test_plan_ids_are_unchanged():
    import json

    assert plan_ids() == json.loads(GOLDEN.read_text())["plan_ids"]

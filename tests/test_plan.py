"""Plans round-trip through their JSON form (the manifest's ``plan``) with the same id; a source given by an absolute
path comes back as recorded (its last component)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from golden_builds import PLAN_CASES

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.family.plan import Plan, SourceSpec

# a source that is not on this machine needs an explicit shard size (the default is sized from the source)
CASES = [*PLAN_CASES, ("imagenet-c", {"size": 128, "severities": "2..3"}), ("vcr", {"delta_v": "param"}),
         ("syn2nat", {"source": "imagefolder:/data/val", "limit": 7, "seed": 3, "image_format": "png",
                     "shard_size": 1000})]  # fmt: skip


@pytest.mark.parametrize(("family", "options"), CASES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(CASES)])
def test_from_dict_inverts_to_dict(family, options):
    plan = corruptgen.make_plan(family, **options)
    again = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert again == dataclasses.replace(plan, source=SourceSpec(**plan.source.to_dict()))
    assert again.plan_id == plan.plan_id and again.to_dict() == plan.to_dict()
    if plan.source.spec == "imagefolder:/data/val":
        assert again.source.spec == plan.source.recorded == "imagefolder:val"


@pytest.mark.parametrize("mutate", [lambda d: d.pop("subsets"), lambda d: d.update(colour="red"),
                                    lambda d: d["subsets"].append("frost"), lambda d: d.update(source=[])])  # fmt: skip
def test_from_dict_rejects_what_is_not_a_plan(mutate):
    data = corruptgen.make_plan("syn2nat").to_dict()
    mutate(data)
    with pytest.raises(CorruptgenError, match="not a corruptgen plan"):
        Plan.from_dict(data)

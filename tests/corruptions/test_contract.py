"""The contract every registered corruption keeps (it enumerates the registry, so no entry lands untested).

For each corruption, over every subset of every family that uses it (all severities / difficulties / modes):
seeded output identical twice; dtype kept and shape kept (a sequence adds a leading frame axis); parameters JSON-safe
(no NaN/inf, no numpy types) with one JSON type per parameter across draws, so a plain webdataset/Arrow loader can
read any subset; a batched form equals the per-image form.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import skimage.data

from corruptgen.corruptions import list_corruptions
from corruptgen.engine.chunk import sample_kwargs
from corruptgen.family.benchmark import get_benchmark, list_benchmarks
from corruptgen.seeding import sample_rng

#: the adversarial family crafts on a tiny surrogate here (tests/tiny_models.py): the contract, not EfficientNet's cost
ALL_OPTIONS = {"imagenet-c": {"extra": True}, "adversarial": {"surrogate": "tiny_models:TinySurrogate"}}


def _uses() -> dict[str, list[tuple]]:
    """qualified corruption name -> [(plan, subset)] over every family's complete plan."""
    uses: dict[str, list[tuple]] = {}
    for name in list_benchmarks():
        bench = get_benchmark(name)
        plans = [bench.plan(subsets="all", **ALL_OPTIONS.get(name, {}))]
        if name == "imagenet-p":
            plans += [bench.plan(subsets="all", difficulty=d) for d in (2, 3)]
        if name == "vcr":
            plans.append(bench.plan(subsets="all", delta_v="param"))
        if name == "adversarial":  # the selections' subsets are transfer sets; one subset of every attack too
            from corruptgen.attacks import ATTACKS

            plans.append(bench.plan(attacks=",".join(ATTACKS.names()), **ALL_OPTIONS[name]))
        for plan in plans:
            for subset in plan.subsets:
                if subset.corruption:
                    uses.setdefault(subset.corruption, []).append((plan, subset))
    return uses


USES = _uses()
NAMES = [c.qualified_name for c in list_corruptions()]


@pytest.fixture(scope="module")
def images() -> list[np.ndarray]:
    from corruptgen.family.preprocess import get_preprocess

    pre = get_preprocess("imagenet")
    return [pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee")]


def json_type(value) -> str:
    """The JSON type signature of a value; lists must be homogeneous (Arrow needs one element type)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "null"
    if isinstance(value, list):
        kinds = {json_type(v) for v in value}
        assert len(kinds) <= 1, f"list with mixed element types {sorted(kinds)}: {str(value)[:80]}"
        return f"list[{kinds.pop() if kinds else '?'}]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{json_type(v)}" for k, v in sorted(value.items())) + "}"
    raise AssertionError(f"not a JSON value: {type(value).__name__}")


def _merge(a: str, b: str) -> str | None:
    """Two signatures of one parameter agree when equal, when one is ``null`` (a missing value: Arrow types the column
    from the other) or when one is an empty list (``list[?]``)."""
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    if a == "list[?]" and b.startswith("list["):
        return b
    if b == "list[?]" and a.startswith("list["):
        return a
    return None


def test_every_corruption_is_used_by_a_family():
    assert sorted(USES) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_corruption_contract(name, images):
    from corruptgen.corruptions import get

    corruption = get(name)
    signature: dict[str, str] = {}
    draws = 0
    for plan, subset in USES[name]:
        for i, image in enumerate(images):
            key = f"img{i}"
            seed = sample_rng(plan.seed, plan.benchmark, subset.name, key)[0]
            extra = sample_kwargs(corruption, plan, subset, key, i, 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, params = corruption.apply(image, seed, **dict(subset.options), **extra)
                if draws == 0:  # same seed, same bytes and parameters
                    again, params_again = corruption.apply(image, seed, **dict(subset.options), **extra)
                    assert np.array_equal(out, again) and params == params_again
            draws += 1
            assert out.dtype == np.uint8
            assert out.shape[-3:] == image.shape and out.ndim in (3, 4)
            text = json.dumps(params, allow_nan=False)  # numpy scalars and NaN/inf fail here
            for key_, value in json.loads(text).items():
                sig = json_type(value)
                merged = _merge(signature.setdefault(key_, sig), sig)
                assert merged is not None, f"{name}: {key_!r} is {signature[key_]} in one draw, {sig} in another"
                signature[key_] = merged
    assert draws >= 2


@pytest.mark.parametrize("name", [c.qualified_name for c in list_corruptions() if c.batch_fn is not None])
def test_batched_form_equals_per_image_form(name, images):
    from corruptgen.corruptions import get

    corruption = get(name)
    plan, subset = USES[name][-1]
    seeds = [sample_rng(plan.seed, plan.benchmark, subset.name, f"img{i}")[0] for i in range(len(images))]
    batch, batch_params = corruption.batch_fn(
        np.stack(images), [np.random.default_rng(s) for s in seeds], device="cpu", **dict(subset.options)
    )
    for image, seed, got, got_params in zip(images, seeds, batch, batch_params, strict=True):
        want, want_params = corruption.apply(image, seed, **dict(subset.options))
        assert np.array_equal(got, want) and got_params == want_params


def test_json_type_rejects_mixed_lists():
    with pytest.raises(AssertionError):
        json_type([0.1, [1, 2]])
    assert json_type({"a": [1, 2], "b": 0.5}) == "{a:list[int],b:float}"
    assert not math.isnan(0.0)


@pytest.mark.parametrize("name", NAMES)
def test_fixed_options_are_checked_when_the_plan_is_made(name):
    from corruptgen.corruptions import get
    from corruptgen.errors import CorruptgenError

    corruption = get(name)
    for _, subset in USES[name]:
        corruption.check_options(dict(subset.options))  # every real subset's options are valid
    with pytest.raises(CorruptgenError, match=name):
        corruption.check_options({**dict(USES[name][0][1].options), "no_such_option": 1})


@pytest.mark.parametrize(
    ("corruption", "options"),
    [
        ("imagenet_c/frost", {"severity": 9}),
        ("imagenet_c/glass_blur", {"sigma": -1.0}),
        ("optics/coma", {"severity": 2, "quantize": "floor"}),
        ("vcr/frost", {"delta_v": "nope"}),
        ("imagenet_p/translate", {"difficulty": 4}),
    ],
)
def test_out_of_domain_values_fail_before_rendering(corruption, options):
    from corruptgen.errors import CorruptgenError
    from corruptgen.family.benchmark import check_subsets
    from corruptgen.family.plan import Subset

    with pytest.raises(CorruptgenError, match="subset 'bad'"):
        check_subsets([Subset("bad", corruption, options=tuple(options.items()))])

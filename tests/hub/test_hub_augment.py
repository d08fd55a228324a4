"""``corruptgen.augment.RandomCorruption``: the builders' corruption functions, per-call seeding, input types."""

from __future__ import annotations

import importlib.util
import pickle

import numpy as np
import pytest
import torch
from PIL import Image

import corruptgen
from corruptgen import augment, seeding
from corruptgen.augment import RandomCorruption
from corruptgen.corruptions import get
from corruptgen.corruptions.registry import families
from corruptgen.errors import CorruptgenError


@pytest.fixture(scope="module")
def photo(protocol_images) -> np.ndarray:
    return protocol_images[2]  # chelsea, 224x224 after the Syn2Nat protocol


def test_filters_follow_the_registry():
    lighting = RandomCorruption(family="syn2nat", category=4, seed=0)
    assert {c.corruption for c in lighting.choices} == {"syn2nat/random_brightness", "syn2nat/random_contrast",
                                                        "syn2nat/random_gamma"}  # fmt: skip
    named = RandomCorruption(family="syn2nat", names=["solarize", "syn2nat/posterize"])
    assert sorted(c.corruption for c in named.choices) == ["syn2nat/posterize", "syn2nat/solarize"]
    with pytest.raises(CorruptgenError, match="did you mean solarize"):
        RandomCorruption(family="syn2nat", names=["solarise"])
    with pytest.raises(CorruptgenError, match="no severities"):
        RandomCorruption(family="syn2nat", severity=3)
    with pytest.raises(CorruptgenError, match="unknown benchmark or corruption family"):
        RandomCorruption(family="syn2nut")


def test_same_function_and_randomness_as_the_registry(photo):
    aug = RandomCorruption(family="syn2nat", category=1, seed=0)
    for seed in range(4):
        out, info = aug.apply_array(photo, np.random.default_rng(seed))
        g = np.random.default_rng(seed)
        g.random(), g.integers(len(aug._names)), g.integers(1)  # the draws that pick the corruption
        expected, params = get(info["corruption"]).apply(photo, g)
        assert np.array_equal(out, expected) and info["params"] == params


def test_seeded_per_key_and_per_call(photo):
    aug = RandomCorruption(family="syn2nat", seed=7)
    a, b = aug(photo, key="chelsea"), aug(photo, key="chelsea")
    assert np.array_equal(a, b)
    again = RandomCorruption(family="syn2nat", seed=7)
    calls = [aug(photo) for _ in range(3)]
    assert all(np.array_equal(x, y) for x, y in zip(calls, [again(photo) for _ in range(3)], strict=True))
    used = {RandomCorruption(family="syn2nat", seed=7).apply(photo, key=str(k))[1]["corruption"] for k in range(12)}
    assert len(used) > 4  # different keys draw different corruptions
    aug.set_epoch(1)
    assert not np.array_equal(aug(photo, key="chelsea"), a) or aug.apply(photo, key="chelsea")[1] != {}


def test_workers_do_not_repeat_each_other(photo, monkeypatch):
    outs = []
    for worker in (1, 2):
        monkeypatch.setattr(seeding, "worker_id", lambda w=worker: w)
        aug = RandomCorruption(family="syn2nat", seed=3)
        outs.append([aug.apply(photo)[1]["params"] for _ in range(3)])
    assert outs[0] != outs[1]


def test_input_types(photo):
    aug = RandomCorruption(family="syn2nat", names=["posterize"], seed=0)
    pil = aug(Image.fromarray(photo), key="k")
    assert isinstance(pil, Image.Image) and pil.size == (224, 224)
    assert np.array_equal(np.asarray(pil), aug(photo, key="k"))
    t = torch.from_numpy(photo).permute(2, 0, 1).float() / 255
    single = aug(t, key="k")
    assert single.shape == t.shape and single.dtype == torch.float32 and 0 <= single.min() and single.max() <= 1
    assert np.array_equal((single * 255).round().byte().permute(1, 2, 0).numpy(), aug(photo, key="k"))
    batch, infos = aug.apply(torch.stack([t, t]))
    assert batch.shape == (2, 3, 224, 224) and len(infos) == 2
    as_uint8 = aug(torch.from_numpy(photo).permute(2, 0, 1).contiguous(), key="k")
    assert as_uint8.dtype == torch.uint8
    with pytest.raises(CorruptgenError, match="HxWx3 uint8"):
        aug(photo.astype(np.float32))


def test_probability_and_pickling(photo):
    never = RandomCorruption(family="syn2nat", p=0.0, seed=0)
    out, info = never.apply(photo)
    assert out is photo and info["corruption"] is None
    aug = RandomCorruption(family="syn2nat", category=4, seed=0)
    aug(photo, key="a")
    clone = pickle.loads(pickle.dumps(aug))  # DataLoader workers with the spawn start method
    assert np.array_equal(clone(photo, key="a"), aug(photo, key="a"))


@pytest.mark.skipif("imagenet-c" not in corruptgen.list_benchmarks(), reason="no ImageNet-C builder yet")
def test_severities_use_the_builders_options(photo):
    aug = RandomCorruption(family="imagenet-c", names=["gaussian_noise"], severity=(2, 3), seed=0)
    assert sorted(c.severity for c in aug.choices) == [2, 3]
    assert all(dict(c.options)["severity"] == c.severity for c in aug.choices)
    severities = {aug.apply(photo, key=k)[1]["severity"] for k in range(8)}
    assert severities == {2, 3}
    registry = RandomCorruption(family="imagenet_c", names=["gaussian_noise"], severity=4, seed=0)
    out, info = registry.apply(photo, key=0)
    assert info["severity"] == 4 and out.shape == photo.shape and out.dtype == np.uint8


def test_optics_augment_is_reexported_lazily():
    if importlib.util.find_spec("corruptgen.families.opticsbench.augment") is None:
        with pytest.raises(AttributeError, match="not installed"):
            augment.OpticsAugment  # noqa: B018
    else:
        from corruptgen.families.opticsbench.augment import OpticsAugment

        assert augment.OpticsAugment is OpticsAugment


@pytest.mark.skipif("imagenet_p" not in families(), reason="no ImageNet-P corruptions yet")
def test_sequence_corruptions_give_one_frame_of_the_input_size(photo):
    aug = RandomCorruption(family="imagenet_p", names=["rotate", "gaussian_noise"], seed=0)
    for k in range(3):
        out, info = aug.apply(photo, key=k)
        assert out.shape == photo.shape and out.dtype == np.uint8 and "frame" in info["params"]


@pytest.mark.parametrize("names, p", [(["pixelate"], 1.0), (["gaussian_noise"], 1.0), (["pixelate", "fog"], 1.0),
                                      (["glass_blur"], 0.7)])  # fmt: skip
def test_a_call_makes_its_generator_only_when_something_draws(photo, monkeypatch, names, p):
    """Same draws as the generator made up front (the p draw, then the choice, then the corruption's); a single
    choice of a corruption that draws nothing (pixelate) seeds no generator, as a build does not."""
    small = np.ascontiguousarray(photo[::4, ::4])
    aug = RandomCorruption(family="imagenet-c", names=names, severity=3, p=p, seed=5)
    made = []
    monkeypatch.setattr(seeding, "call_rng", lambda *a, f=seeding.call_rng: made.append(a) or f(*a))
    for k in range(6):
        key = None if k % 2 else f"key{k}"
        rng = seeding.call_rng(aug.seed, aug.epoch, aug._calls + (key is None), key)
        made.clear()
        out, info = aug.apply(small, key=key)
        assert bool(made) == (names != ["pixelate"] or p < 1)
        if rng.random() >= p:
            assert info["corruption"] is None
            continue
        name = aug._names[int(rng.integers(len(aug._names)))]
        choices = aug._by_corruption[name]
        expected, params = get(name).apply(small, rng, **dict(choices[int(rng.integers(len(choices)))].options))
        assert np.array_equal(out, expected) and info["params"] == params

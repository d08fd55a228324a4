"""VCR corruptions on real photos: registry, monotone Δv in the strength, the uniform-Δv search, param mode,
determinism, stored-image Δv and bad input (Shen et al., WACV 2025)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
import skimage.data
from scipy import stats

from corruptgen.corruptions import get, list_corruptions
from corruptgen.families.vcr import (
    DOMAINS,
    NAMES,
    Scorer,
    corrupt,
    one_torch_thread,
    poisson_quantile,
    smooth_disk,
    stored,
)
from corruptgen.families.vcr.ops_blur import box_blur, box_weights
from corruptgen.family.preprocess import get_preprocess
from corruptgen.quality import vif

PAPER_ORDER = ("shot_noise", "impulse_noise", "gaussian_noise", "glass_blur", "gaussian_blur", "defocus_blur",
               "motion_blur", "brightness", "frost", "blur", "median_blur", "hue_saturation_value", "color_jitter",
               "uniform_noise")  # fmt: skip


@pytest.fixture(scope="module")
def photos() -> list[np.ndarray]:
    """astronaut, chelsea, coffee, rocket after the VCR benchmark's preprocessing (Resize 256 + CenterCrop 224)."""
    pre = get_preprocess("imagenet")
    return [pre(getattr(skimage.data, n)()) for n in ("astronaut", "chelsea", "coffee", "rocket")]


def test_registry_has_the_14_corruptions():
    assert NAMES == PAPER_ORDER
    assert [c.name for c in list_corruptions("vcr")] == list(PAPER_ORDER)
    for name in NAMES:
        c = get(f"vcr/{name}")
        assert c.family == "vcr" and c.category in (1, 2, 3, 4) and c.params["strength"] == [0.0, 1.0]
        assert c.reference and c.fidelity.startswith("continuous strength")


@pytest.mark.parametrize("name", NAMES)
def test_delta_v_is_monotone_in_the_strength(name, photos):
    """Δv of the stored image for a fixed field rises with s from 0 (identity) to near destruction, with no jump
    at the start (blur, median blur and uniform noise included). Tolerated dips: JPEG and 8-bit rounding wiggles
    (0.02) and, for colour jitter, the last steps before a flat image (0.05)."""
    d = DOMAINS[name]
    us = np.linspace(0.0, 1.0, 9)
    tol = 0.05 if name == "color_jitter" else 0.02
    with one_torch_thread():
        for i, img in enumerate(photos[:3]):
            fld = d.make_field(np.random.default_rng(i), img)
            images = [d.apply(img, d.strength(u), fld) for u in us] + [d.apply(img, 1e-5, fld)]
            *dv, small = 1.0 - Scorer(img).vif(images)
            dv = np.array(dv)
            assert dv[0] < 1e-9 and small < 0.1, (dv.round(3), small)  # every domain starts at Δv 0, continuously
            assert (np.maximum.accumulate(dv) - dv).max() <= tol, dv.round(3)
            assert dv[-1] > 0.85, dv.round(3)


def test_strength_zero_is_the_clean_image_and_one_destroys(photos):
    img = photos[0]
    for name in NAMES:
        d = DOMAINS[name]
        fld = d.make_field(np.random.default_rng(0), img)
        assert np.array_equal(d.apply(img, 0.0, fld), img), name
        out = d.apply(img, 1.0, fld)
        assert out.dtype == np.uint8 and out.shape == img.shape, name


def test_uniform_mode_hits_its_targets(photos):
    """|Δv − target| ≤ 0.02 for ≥ 95 % of reachable samples (measured on the stored images)."""
    errors, evaluations = [], []
    for name in NAMES:
        for i, img in enumerate(photos[:2]):
            _, p = corrupt(name, img, np.random.default_rng(100 + i))
            assert p["delta_v_mode"] == "uniform" and p["stored_as"] == "jpg q85"
            lo, hi = p["reachable_delta_v"]
            assert lo == 0.0 and 0.0 <= p["target_delta_v"] <= 1.0 and lo <= hi <= 1.0 and p["stratum"] is None
            if p["target_delta_v"] >= hi:  # beyond this image's reach: the strongest corruption, s = 1
                assert p["strength"] == 1.0 and p["delta_v"] == hi and p["evaluations"] <= 2
                continue
            errors.append(abs(p["delta_v"] - p["target_delta_v"]))
            evaluations.append(p["evaluations"])
    assert len(errors) >= 0.8 * 2 * len(NAMES)
    errors = np.array(errors)
    assert (errors <= 0.02).mean() >= 0.95, errors.round(3)
    assert np.median(errors) <= 0.005 and max(evaluations) <= 1 + 8 * 4


def test_stratified_targets(photos):
    """``stratum=(position, count)``: the target quantile is (position + u) / count with u the sample's own first
    uniform; count 1 (or no stratum) is the plain U(0, 1) draw. Param mode stratifies the strength."""
    img = photos[1]
    _, plain = corrupt("gaussian_noise", img, np.random.default_rng(7))
    _, one = corrupt("gaussian_noise", img, np.random.default_rng(7), stratum=(0, 1))
    assert plain["target_delta_v"] == one["target_delta_v"] == float(np.random.default_rng(7).random())
    assert plain["stratum"] is None and one["stratum"] == [0, 1] and plain["delta_v"] == one["delta_v"]
    for position in (0, 3, 9):
        _, p = corrupt("brightness", img, np.random.default_rng(position), stratum=(position, 10))
        u = float(np.random.default_rng(position).random())
        assert p["target_delta_v"] == pytest.approx((position + u) / 10, abs=1e-15) and p["stratum"] == [position, 10]
        _, q = corrupt("brightness", img, np.random.default_rng(position), stratum=(position, 10), delta_v="param")
        assert q["strength"] == pytest.approx((position + u) / 10, abs=1e-15) and q["target_delta_v"] is None
    c = get("vcr/brightness")
    for bad in ((3, 3), (-1, 2), (0,), (0.5, 2), "0/2"):
        with pytest.raises(ValueError, match="stratum must be"):
            c.apply(img, 0, stratum=bad)


def test_continuous_box_blur_matches_cv2_blur(photos):
    """Area-weighted box of width w: w = 1 is the identity, odd integer w is Albumentations' ``Blur`` (``cv2.blur``,
    reflect-101 border), and the weights move continuously in between."""
    from albumentations.augmentations.blur import functional as albu_blur

    img = photos[3]
    assert np.array_equal(box_weights(1.0), [1.0])
    for k in (3, 5, 9, 61):
        assert np.allclose(box_weights(k), np.full(k, 1.0 / k))
        reference = albu_blur.box_blur(img, k)
        assert np.abs(box_blur(img, k) - cv2.blur(img.astype(np.float32), (k, k))).max() < 1e-3
        assert np.array_equal(np.clip(np.rint(box_blur(img, k)), 0, 255).astype(np.uint8), reference), k
    a, b = box_weights(4.999), box_weights(5.001)
    assert np.abs(np.pad(a, 1) - b).max() < 1e-3 and box_weights(1.2)[0] == pytest.approx(0.1 / 1.2)
    d = DOMAINS["blur"]
    fld = d.make_field(np.random.default_rng(0), img)
    p = d.params(0.1, fld)
    assert p == {"width": 7.0} and np.abs(d.apply(img, 0.1, fld).astype(int) - albu_blur.box_blur(img, 7)).max() <= 1


def test_median_blur_blends_adjacent_kernels(photos):
    """Median blur between odd sizes: (1 − f)·median_k + f·median_{k+2}; odd k (f = 0) is ``cv2.medianBlur``."""
    img = photos[0]
    d = DOMAINS["median_blur"]
    fld = d.make_field(np.random.default_rng(0), img)
    assert d.params(4 / 30, fld) == {"ksize": 9, "blend": 0.0}
    assert np.array_equal(d.apply(img, 4 / 30, fld), cv2.medianBlur(img, 9))
    assert d.params(4.25 / 30, fld) == {"ksize": 9, "blend": 0.25}
    expected = 0.75 * cv2.medianBlur(img, 9).astype(float) + 0.25 * cv2.medianBlur(img, 11)
    assert np.abs(d.apply(img, 4.25 / 30, fld) - expected).max() < 1.0 + 1e-4
    assert d.params(1.0, fld) == {"ksize": 61, "blend": 0.0}


def test_uniform_noise_fades_in_then_is_geirhos(photos):
    """s ≤ 0.45 fades to Geirhos' grey contrast-0.3 image; beyond, exactly Geirhos' noise on it (three equal
    channels), with fade/contrast/width recorded."""
    img = photos[2]
    d = DOMAINS["uniform_noise"]
    fld = d.make_field(np.random.default_rng(3), img)
    assert d.params(0.225, fld) == {"fade": 0.5, "contrast": 0.65, "width": 0.0}
    p = d.params(0.725, fld)
    assert p["fade"] == 1.0 and p["contrast"] == 0.3 and p["width"] == pytest.approx(1.5 * 0.25)
    out = d.apply(img, 0.725, fld)
    gray = (img.astype(np.float32) @ np.array([0.2125, 0.7154, 0.0721], np.float32)) / 255.0
    y = np.clip(0.35 + 0.3 * gray + 1.5 * 0.25 * (2 * fld["u"] - 1), 0, 1) * 255
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 0] == out[..., 2]).all()
    assert np.abs(out[..., 0] - y).max() < 1.0 + 1e-3
    base = d.apply(img, 0.45, fld)[..., 0]
    assert np.abs(base - np.clip(0.35 + 0.3 * gray, 0, 1) * 255).max() < 1.0 + 1e-3


def test_param_mode_samples_the_strength_uniformly(photos):
    img = photos[2]
    strengths = []
    for seed in range(6):
        _, p = corrupt("gaussian_blur", img, np.random.default_rng(seed), delta_v="param")
        assert p["target_delta_v"] is None and p["evaluations"] == 1 and p["delta_v_mode"] == "param"
        assert p["sigma"] == pytest.approx(96 * p["strength"], abs=1e-5)
        strengths.append(p["strength"])
    assert strengths == [float(np.random.default_rng(s).random()) for s in range(6)]
    _, p = corrupt("median_blur", img, np.random.default_rng(3), delta_v="param")
    assert p["ksize"] in range(1, 62, 2) and 0.0 <= p["blend"] < 1.0


def test_stored_delta_v_is_the_vif_of_the_stored_pair(photos):
    """Δv is measured on encode → decode of both images with the build's codec (stored to 10 decimals)."""
    img = photos[0]
    for fmt, quality in (("jpg", 85), ("png", 85), ("webp", 70)):
        out, p = corrupt("frost", img, np.random.default_rng(1), image_format=fmt, quality=quality)
        value = vif(stored(img, fmt, quality), stored(out, fmt, quality))
        assert p["vif"] == pytest.approx(value, abs=1e-10) and p["delta_v"] == pytest.approx(max(0, 1 - value))
    assert np.array_equal(stored(img, "png"), img)


def test_same_generator_same_output_and_params_are_json(photos):
    img = photos[3]
    for name in ("shot_noise", "glass_blur", "color_jitter", "hue_saturation_value", "frost", "motion_blur"):
        a, pa = corrupt(name, img, np.random.default_rng(42))
        b, pb = corrupt(name, img, np.random.default_rng(42))
        assert np.array_equal(a, b) and pa == pb
        json.dumps(pa, allow_nan=False)
        c, _ = corrupt(name, img, np.random.default_rng(43))
        assert not np.array_equal(a, c)


def test_bad_input_and_options(photos):
    c = get("vcr/gaussian_noise")
    img = photos[0]
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        c.apply(img.astype(np.float32), 0)
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        c.apply(img[..., 0], 0)
    with pytest.raises(ValueError, match="at least 72x72"):
        c.apply(img[:60, :200], 0)
    with pytest.raises(ValueError, match="delta_v must be one of uniform, param"):
        c.apply(img, 0, delta_v="log")
    with pytest.raises(ValueError, match="image_format"):
        c.apply(img, 0, image_format="gif")
    with pytest.raises(ValueError, match="quality"):
        c.apply(img, 0, quality=0)
    with pytest.raises(TypeError, match="unexpected options"):
        c.apply(img, 0, severity=3)
    flat = np.full((96, 128, 3), 128, np.uint8)  # a featureless image: Δv is defined (VIF of a flat reference)
    out, p = c.apply(flat, 0)
    assert out.shape == flat.shape and 0.0 <= p["delta_v"] <= 1.0


def test_poisson_quantile_matches_scipy():
    rng = np.random.default_rng(0)
    u = rng.random(20_000)
    for mu in (0.05, 1.0, 7.5):  # exact branch
        assert np.array_equal(poisson_quantile(u, np.full_like(u, mu)), stats.poisson.ppf(u, mu))
    for mu in (12.0, 80.0):  # Cornish-Fisher branch: at most one count off, rarely
        diff = poisson_quantile(u, np.full_like(u, mu)) - stats.poisson.ppf(u, mu)
        assert np.abs(diff).max() <= 1 and (diff != 0).mean() < 0.015
    k1, k2 = poisson_quantile(u, np.full_like(u, 3.0)), poisson_quantile(u, np.full_like(u, 30.0))
    assert (k2 >= k1).all()  # one uniform field couples the draws: more photons, never fewer counts


def test_smooth_disk_grows_continuously():
    identity = smooth_disk(0.0, 0.0)
    assert identity.shape == (3, 3) and identity[1, 1] == 1.0 and identity.sum() == 1.0
    a, b = smooth_disk(2.999, 0.0), smooth_disk(3.001, 0.0)
    pad = (b.shape[0] - a.shape[0]) // 2
    assert np.abs(np.pad(a, pad) - b).max() < 1e-3
    for r in (0.4, 3.3, 12.0):
        k = smooth_disk(r, 0.3)
        assert k.sum() == pytest.approx(1.0, abs=1e-5) and np.allclose(k, k.T) and np.allclose(k, k[::-1])


def test_a_plan_of_another_search_revision_is_refused():
    from corruptgen.corruptions import get
    from corruptgen.errors import CorruptgenError

    vcr_blur = get("vcr/gaussian_blur")
    with pytest.raises(CorruptgenError, match="search revision 2, not 1"):
        vcr_blur.check_options({"delta_v": "uniform", "search": 1, "search_group": 4})

"""The 40 Syn2Nat candidates: registry, determinism, and severity against albumentations 0.5.2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from corruptgen.corruptions import get, list_corruptions
from corruptgen.errors import UnknownNameError
from corruptgen.families.syn2nat.corruptions import SYN2NAT_18

# Mean |corrupted - clean| (0-255) over 40 draws (10 seeds x astronaut, coffee, chelsea, rocket at 224x224).
# Left: albumentations 0.5.2 (spec syn2nat.md §7, the reference); right: measured here with corruptgen
# (albumentations 2.0.8 + the 0.5.2 ports), seeds 1000*i + j.
SEVERITY = {
    "affines": (36.5, 36.3), "blur": (8.4, 8.1), "border": (65.8, 65.8), "channel_dropout": (33.3, 32.8),
    "coarse_dropout": (3.9, 3.8), "color_jitter": (55.5, 54.4), "cutout": (35.8, 35.9), "downscale": (10.6, 10.6),
    "elastic_transform": (44.1, 39.2), "emboss": (21.7, 20.7), "flip": (52.1, 55.1), "gaussian_blur": (7.7, 7.5),
    "gauss_noise": (20.7, 20.4), "grid_distortion": (43.4, 41.7), "hue_saturation_value": (55.4, 58.8),
    "image_compression": (9.0, 9.2), "invert_img": (119.7, 119.7), "iso_noise": (35.2, 35.5),
    "jpeg_compression": (9.3, 9.2), "median_blur": (5.8, 6.2), "motion_blur": (14.1, 15.0),
    "multiplicative_noise": (14.5, 14.5), "optical_distortion": (34.4, 35.4), "perspective": (40.7, 43.2),
    "posterize": (30.2, 30.2), "random_brightness": (73.7, 76.3), "random_contrast": (52.4, 58.6),
    "random_fog": (13.9, 14.0), "random_gamma": (84.3, 84.8), "random_grid_shuffle": (52.0, 51.7),
    "random_rain": (31.0, 31.0), "random_shadow": (20.4, 22.1), "random_snow": (60.3, 57.1),
    "random_sun_flare": (43.9, 48.0), "rgb_shift": (72.8, 72.0), "rotate": (52.6, 52.6), "sharpen": (15.9, 17.5),
    "solarize": (15.6, 15.6), "to_sepia": (29.0, 29.0), "transpose": (52.5, 50.4),
}  # fmt: skip

NAMES = [c.name for c in list_corruptions("syn2nat")]


def test_registry_has_the_40_candidates_and_the_18():
    assert len(NAMES) == 40 and set(NAMES) == set(SEVERITY)
    assert len(SYN2NAT_18) == 18 and set(SYN2NAT_18) <= set(NAMES)
    cats = {}
    for name in SYN2NAT_18:
        cats.setdefault(get(f"syn2nat/{name}").category, []).append(name)
    assert sorted(cats) == [1, 2, 3, 4, 5, 6] and all(len(v) == 3 for v in cats.values())
    assert sum(get(f"syn2nat/{n}").category is None for n in NAMES) == 22


def test_unknown_name_suggests():
    with pytest.raises(UnknownNameError, match="did you mean solarize"):
        get("solarise")
    assert get("syn2nat/solarize") is get("solarize", family="syn2nat") is get("solarize")


@pytest.mark.parametrize("name", NAMES)
def test_corruption_is_seeded_and_changes_the_image(name, protocol_images):
    c = get(f"syn2nat/{name}")
    image = protocol_images[0]
    out1, p1 = c.apply(image, 7)
    out2, p2 = c.apply(image, np.random.default_rng(7))
    assert out1.dtype == np.uint8 and out1.shape == image.shape
    assert np.array_equal(out1, out2) and p1 == p2
    json.dumps(p1)  # params are JSON-safe
    assert np.abs(out1.astype(int) - image).mean() > 0.5
    if name not in (
        "invert_img",
        "to_sepia",
        "posterize",
        "solarize",
        "border",
        "downscale",
    ):  # deterministic corruptions
        assert any(not np.array_equal(out1, c(image, s)) for s in (8, 9, 10))


@pytest.mark.parametrize("name", NAMES)
def test_severity_matches_albumentations_052(name, protocol_images):
    reference, _measured_here = SEVERITY[name]
    c = get(f"syn2nat/{name}")
    mads = [
        np.abs(c(img, 1000 * i + j).astype(np.float64) - img).mean()
        for i, img in enumerate(protocol_images)
        for j in range(10)
    ]
    assert abs(np.mean(mads) / reference - 1) <= 0.15, f"{name}: {np.mean(mads):.1f} vs 0.5.2 {reference}"


def test_input_validation(protocol_images):
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        get("solarize")(protocol_images[0].astype(np.float32))


def test_names_shared_by_families_need_a_family():
    with pytest.raises(UnknownNameError, match=r"ambiguous.*syn2nat/gaussian_blur"):
        get("gaussian_blur")
    assert get("gaussian_blur", family="syn2nat").family == "syn2nat"

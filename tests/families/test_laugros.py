"""The ``laugros`` family against the thesis's Figures 3.2 and 4.3 (Laugros, PhD thesis 2022): each corruption's
pixels on real photographs are checked against the figure's one-line description and its severity range, measured
from the pixels (not read back from the parameters) wherever the description allows; sizes given for 224 px scale
with the short side (a 96×96 and a 64×112 photo here)."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
import scipy.ndimage as ndi
from PIL import Image
from small_images import photos

from corruptgen.corruptions import get
from corruptgen.errors import CorruptgenError
from corruptgen.families.laugros import NAMES, SELECTIONS
from corruptgen.family.benchmark import get_benchmark

SQUARE = photos(96, ("astronaut", "coffee"))
WIDE = np.ascontiguousarray(photos(112, ("chelsea",))[0][24:88])  # 64×112: short side 64
IMAGES = [*SQUARE, WIDE]
SEEDS = range(4)
LUMA = np.array([0.299, 0.587, 0.114])


def runs(name: str):
    """(input, output as float, params) for every image and seed."""
    c = get(f"laugros/{name}")
    for image in IMAGES:
        for seed in SEEDS:
            out, params = c.apply(image, seed)
            assert out.dtype == np.uint8 and out.shape == image.shape
            assert name == "flip" or params["severity"] == params["severity"]  # recorded (not NaN)
            yield image.astype(np.float64), out.astype(np.float64), params


def scaled(value: float, image: np.ndarray) -> int:
    return max(round(value * min(image.shape[:2]) / 224), 1)


def within(value: float, lo: float, hi: float) -> bool:
    return lo <= value <= hi


def test_gaussian_noise_is_zero_mean_with_the_drawn_std():
    for x, y, p in runs("gaussian_noise"):
        assert within(p["sigma"], 0.05, 0.18)
        d = (y - x)[(x > 30) & (x < 225) & (y > 0) & (y < 255)]
        robust_std = 1.4826 * np.median(np.abs(d - np.median(d))) / 255
        assert robust_std == pytest.approx(p["sigma"], rel=0.1)
        assert abs(np.median(d)) <= 1.0


def test_blur_is_the_image_blended_with_five_3x3_box_filters():
    for x, y, p in runs("blur"):
        b = x
        for _ in range(5):
            b = ndi.uniform_filter(b, size=(3, 3, 1), mode="mirror")
        inner = (slice(6, -6), slice(6, -6))
        u, v = (b - x)[inner].ravel(), (y - x)[inner].ravel()
        alpha = float(u @ v / (u @ u))  # least-squares fit of y − x = α (b − x)
        assert within(alpha, 0.4 - 0.01, 0.95 + 0.01) and alpha == pytest.approx(p["alpha"], abs=0.01)


def _authors_artifact(top: int, left: int, extended: bool, h: int, w: int) -> np.ndarray:
    """The pixels of one artifact as the authors' ``get_artifacts`` paints them at 224 px: row r = top + 1 and the
    rows above and below; a dash at columns c − 2..c + 2 (c = left + 2); when extended, ticks at c + 6..c + 14 step 2
    if c + 2 < w − 12 and at c − 10..c − 4 step 2 if c − 2 > 7."""
    r, c = top + 1, left + 2
    cols = list(range(c - 2, c + 3))
    if extended and c + 2 < w - 12:
        cols += list(range(c + 6, c + 15, 2))
    if extended and c - 2 > 7:
        cols += list(range(c - 10, c - 3, 2))
    mask = np.zeros((h, w), bool)
    mask[r - 1 : r + 2, cols] = True
    return mask


def test_artifacts_are_the_authors_dashed_lines_at_224_px():
    """Figures 3.2 / 4.3's "small dotted lines" are 5-px dashes, 3 px tall, with 1-px ticks every 2 px on each side
    (the authors' code, on which the 15–170 range was set); one gray level for all."""
    image = photos(224, ("astronaut",))[0]
    c = get("laugros/artifacts")
    extended = []
    for seed in range(6):
        out, p = c.apply(image, seed)
        assert within(p["count"], 15, 170) and len(p["tops"]) == p["count"] and p["unit"] == 1
        want = np.zeros((224, 224), bool)
        for top, left, ext in zip(p["tops"], p["lefts"], p["extended"], strict=True):
            assert 1 <= top + 1 <= 222 and 2 <= left + 2 <= 221  # the code's randint(1, h − 2), randint(2, w − 3)
            want |= _authors_artifact(top, left, ext, 224, 224)
        gray = round(p["gray"] * 255)
        assert (out[want] == gray).all() and (out[~want] == image[~want]).all()
        extended += p["extended"]
    assert np.mean(extended) == pytest.approx(6 / 7, abs=0.04)  # the code's randint(0, 6) >= 1


def test_artifacts_dashes_are_five_pixels_wide():
    """A lone, unextended artifact measured from the pixels: a solid 5×3 block."""
    from corruptgen.families.laugros import ops

    image = np.zeros((224, 224, 3), np.uint8)
    out = ops.dashed_lines(image, np.array([50]), np.array([100]), np.array([False]), 1, 200)
    rows, cols = np.nonzero(out[..., 0])
    assert (rows.min(), rows.max(), cols.min(), cols.max(), len(rows)) == (50, 52, 100, 104, 15)
    ticks = ops.dashed_lines(image, np.array([50]), np.array([100]), np.array([True]), 1, 200)[51, :, 0] > 0
    assert np.flatnonzero(ticks).tolist() == [92, 94, 96, 98, 100, 101, 102, 103, 104, 108, 110, 112, 114, 116]


def test_artifacts_scale_with_the_short_side():
    for x, y, p in runs("artifacts"):
        assert p["unit"] == max(round(min(x.shape[:2]) / 224), 1)
        changed = (x != y).any(-1)
        value = y[changed]
        assert (value == value[0, 0]).all()  # one gray level, R = G = B
    big = photos(448, ("coffee",))[0]
    out, p = get("laugros/artifacts").apply(big, 0)
    assert p["unit"] == 2
    top, left = p["tops"][0], p["lefts"][0]
    assert (out[top : top + 6, left : left + 10] == round(p["gray"] * 255)).all()  # the dash, twice the size


def test_obstruction_is_one_square_of_one_gray_of_the_drawn_size():
    for x, y, p in runs("obstruction"):
        rows, cols = np.nonzero((x != y).any(-1))
        height, width = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
        assert abs(height - p["size_px"]) <= 1 and abs(width - p["size_px"]) <= 1  # an edge may match the fill
        box = y[p["top"] : p["top"] + p["size_px"], p["left"] : p["left"] + p["size_px"]]
        assert (box == box[0, 0, 0]).all()
        assert within(p["size_px"], scaled(47, x), scaled(125, x)) and within(p["severity"], 47, 125)


def test_translation_moves_the_content_by_the_drawn_pixels_both_ways():
    signs, unequal = set(), 0
    for x, y, p in runs("translation"):
        dx, dy = p["dx"], p["dy"]
        h, w = x.shape[:2]
        assert [abs(dx), abs(dy)] == p["shift_px"] == [scaled(v, x) for v in p["severities"]]
        assert all(within(v, 15, 62) for v in p["severities"]) and p["severity"] == max(p["severities"])
        assert (y[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)]
                == x[max(-dy, 0) : h - max(dy, 0), max(-dx, 0) : w - max(dx, 0)]).all()  # fmt: skip
        uncovered = np.ones((h, w), bool)
        uncovered[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = False
        assert (y[uncovered] == 0).all()
        signs.add((np.sign(dx), np.sign(dy)))
        unequal += abs(dx) != abs(dy)
    assert len(signs) > 1 and unequal > len(IMAGES) * len(SEEDS) // 2  # the two shifts are drawn apart


def test_rotation_turns_the_image_by_the_drawn_angle_either_way():
    directions = set()
    for x, y, p in runs("rotation"):
        assert within(abs(p["angle"]), 7, 50)
        image = Image.fromarray(x.astype(np.uint8))
        h, w = x.shape[:2]
        yy, xx = np.mgrid[:h, :w]
        inner = np.hypot(yy - (h - 1) / 2, xx - (w - 1) / 2) < 0.4 * min(h, w)
        err = {
            s: np.abs(np.asarray(image.rotate(s * p["angle"], Image.Resampling.BILINEAR), float) - y)[inner].mean()
            for s in (1, -1)
        }  # fmt: skip  (PIL: positive = anticlockwise)
        assert err[1] < 2.0 and err[-1] > 3 * err[1]
        directions.add(p["direction"])
    assert directions == {"clockwise", "anticlockwise"}


def test_brightness_adds_or_subtracts_one_value():
    signs = set()
    for x, y, p in runs("brightness"):
        assert within(abs(p["delta"]), 0.16, 0.51)
        shift = 255 * p["delta"]
        free = (x + shift > 0.5) & (x + shift < 254.5)
        assert np.abs((y - x)[free] - shift).max() <= 0.5
        signs.add(np.sign(p["delta"]))
    assert signs == {1, -1}


def test_contrast_is_reduced_towards_the_mean_by_the_drawn_factor():
    for x, y, p in runs("contrast"):
        slope, intercept = np.polyfit(x.ravel(), y.ravel(), 1)
        factor = 1 - slope
        assert within(factor, 0.33 - 0.01, 0.74 + 0.01) and factor == pytest.approx(p["factor"], abs=0.005)
        assert intercept == pytest.approx(factor * x.mean(), abs=1.0)
        assert y.std() < x.std()


def test_color_distortion_raises_one_channel():
    for x, y, p in runs("color_distortion"):
        changed = [c for c in range(3) if (x[..., c] != y[..., c]).any()]
        assert changed == [p["channel"]]
        d = (y - x)[..., p["channel"]]
        assert (d >= 0).all()
        free = x[..., p["channel"]] + 255 * p["delta"] < 254.5
        assert within(d[free].mean() / 255, 0.09 - 0.002, 0.40 + 0.002)


def test_quantization_keeps_the_drawn_number_of_levels():
    for x, y, p in runs("quantization"):
        levels = p["levels"]
        assert within(levels, 4, 9)
        grid = np.rint(np.arange(levels) * 255 / (levels - 1))
        assert set(np.unique(y)) <= set(grid) and len(np.unique(y)) <= levels
        assert np.abs(y - x).max() <= 255 / (2 * (levels - 1)) + 0.5  # the nearest level


def test_thumbnail_resize_is_a_bilinear_round_trip_through_the_drawn_size():
    for x, y, p in runs("thumbnail_resize"):
        h, w = x.shape[:2]
        assert within(p["factor"], 1.1, 3.25) and p["size"] == [int(h / p["factor"]), int(w / p["factor"])]
        small = Image.fromarray(x.astype(np.uint8)).resize(p["size"][::-1], Image.Resampling.BILINEAR)
        assert (np.asarray(small.resize((w, h), Image.Resampling.BILINEAR)) == y).all()
        assert ndi.laplace(y.mean(-1)).std() < ndi.laplace(x.mean(-1)).std()  # fine detail lost


def test_border_is_a_gray_frame_of_the_drawn_thickness():
    grays = set()
    for x, y, p in runs("border"):
        t = p["thickness_px"]
        assert within(t, scaled(9, x), scaled(46, x))
        frame = np.ones(x.shape[:2], bool)
        frame[t:-t, t:-t] = False
        assert (y[frame] == round(255 * p["gray"])).all() and (y[t:-t, t:-t] == x[t:-t, t:-t]).all()
        grays.add(p["gray"])
    assert len(grays) > 1  # "a unique pixel value" drawn per image, as the authors' code of Figure 4.3's ranges


def test_shear_shifts_each_row_in_proportion_to_its_distance_from_the_centre():
    for x, y, p in runs("shear"):
        assert within(abs(p["factor"]), 0.12, 0.39)
        assert p["degrees"] == pytest.approx(np.degrees(np.arctan(p["factor"])))
        h = x.shape[0]
        for row in (h // 4, h // 2, 3 * h // 4):
            want = p["factor"] * (row - (h - 1) / 2)
            shifts = np.arange(-int(0.39 * h), int(0.39 * h) + 1)
            err = [np.abs(y[row, 20:-20] - np.roll(x[row], s, axis=0)[20:-20]).mean() for s in shifts]
            assert abs(shifts[int(np.argmin(err))] - want) <= 1.0


def test_shear_is_never_too_small_to_see():
    """§3.2.2's lower bound: every draw shears (the old range from 0 left some images untouched)."""
    tiny = photos(96, ("astronaut",))[0]
    shear = get("laugros/shear")
    factors = [abs(shear.apply(tiny, seed)[1]["factor"]) for seed in range(300)]
    assert min(factors) >= 0.12 and min(factors) < 0.13 and max(factors) > 0.38


def test_flip_is_the_image_upside_down():
    for x, y, p in runs("flip"):
        assert (y == x[::-1]).all() and p == {"axis": "vertical"}


def test_backlight_lightens_one_area_and_darkens_the_other():
    axes = set()
    for x, y, p in runs("backlight"):
        assert within(abs(p["delta"]), 0.11, 0.44)
        side = x.shape[1] if p["axis"] == "x" else x.shape[0]
        assert abs(p["split"] - side // 2) <= side // 5
        d = np.moveaxis(y - x, 1, 0) if p["axis"] == "x" else y - x  # split axis first
        xs = np.moveaxis(x, 1, 0) if p["axis"] == "x" else x
        for part, sign in ((slice(0, p["split"]), 1), (slice(p["split"], None), -1)):
            shift = sign * 255 * p["delta"]
            free = (xs[part] + shift > 0.5) & (xs[part] + shift < 254.5)
            assert np.abs(d[part][free] - shift).max() <= 0.5
        axes.add(p["axis"])
    assert axes == {"x", "y"}


def test_gray_scale_takes_the_drawn_share_of_colour_away():
    for x, y, p in runs("gray_scale"):
        assert within(p["alpha"], 0.49, 1.0)
        chroma_x, chroma_y = x - (x @ LUMA)[..., None], y - (y @ LUMA)[..., None]
        kept = float((chroma_x * chroma_y).sum() / (chroma_x**2).sum())
        assert kept == pytest.approx(1 - p["alpha"], abs=0.02)
        assert np.abs(y @ LUMA - x @ LUMA).max() <= 1.0  # the luma is unchanged
    from corruptgen.families.laugros.ops import gray_blend

    full = gray_blend(SQUARE[0], 1.0)
    assert (full[..., 0] == full[..., 1]).all() and (full[..., 1] == full[..., 2]).all()


def test_selections_are_the_thesis_sets():
    bench = get_benchmark("laugros")
    assert [s.name for s in bench.plan().subsets][1:] == list(NAMES) and len(NAMES) == 16
    assert SELECTIONS["iccvw2019"] == (
        "gaussian_noise",
        "artifacts",
        "obstruction",
        "blur",
        "contrast",
        "brightness",
        "color_distortion",
        "translation",
        "rotation",
        "flip",
    )  # Table 3.2's columns
    assert len(SELECTIONS["not-in-c"]) == 11 and "flip" not in SELECTIONS["not-in-c"]
    for name, members in SELECTIONS.items():
        assert [s.name for s in bench.plan(selection=name).subsets] == ["clean", *members]
    assert set(SELECTIONS["eccvw2020"]) == {"rotation", "translation", "color_distortion", "obstruction"}
    assert {"border", "obstruction"} <= set(SELECTIONS["not-in-c"]) and "border" not in SELECTIONS["iccvw2019"]
    assert [s.name for s in bench.plan(selection="not-in-c", subsets="border").subsets] == ["clean", "border"]
    assert bench.plan(selection="all").plan_id == bench.plan().plan_id
    with pytest.raises(CorruptgenError, match="not in --selection eccvw2020"):
        bench.plan(selection="eccvw2020", subsets="blur")
    with pytest.raises(CorruptgenError, match="--selection must be one of"):
        bench.plan(selection="iccv")


def test_png_build_stores_the_exact_pixels(tmp_path):
    import corruptgen

    corruptgen.build("laugros", out=tmp_path, subsets="border,quantization", limit=1, image_format="png",
                     progress=False)  # fmt: skip

    def first(subset):
        (shard,) = (tmp_path / "laugros" / "data" / subset).glob("*.tar")
        with tarfile.open(shard) as tar:
            members = {m.name.rsplit(".", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers()}
        import json

        return np.asarray(Image.open(io.BytesIO(members["png"]))), json.loads(members["json"])

    clean, _ = first("clean")
    border, meta = first("border")
    t = meta["params"]["thickness_px"]
    assert clean.shape == (224, 224, 3) and within(t, 9, 46) and t == meta["params"]["severity"]
    gray = round(255 * meta["params"]["gray"])
    assert (border[:t] == gray).all() and (border[t:-t, t:-t] == clean[t:-t, t:-t]).all()
    quantized, meta = first("quantization")
    assert len(np.unique(quantized)) <= meta["params"]["levels"]

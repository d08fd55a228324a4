"""Straightforward per-image transcriptions of the reference ImageNet-C formulas, for tests and the benchmark.

Transcribed from hendrycks/robustness ``ImageNet-C/create_c/make_imagenet_c.py`` (Apache-2.0) onto current
NumPy / scikit-image / SciPy / OpenCV, with the global ``np.random`` replaced by a Generator ``rng`` making the same
calls in the same order. ImageMagick's MotionBlurImage (which the reference calls through Wand) is transcribed tap by
tap. Glass blur is the reference's literal per-pixel loop, with its ``randint`` draws taken from an injected array.
Each function maps a uint8 HxWx3 image to uint8 with the reference's truncating ``np.uint8`` cast.
"""

from __future__ import annotations

import io
import math

import cv2
import numpy as np
import skimage as sk
from PIL import Image
from scipy.ndimage import map_coordinates
from scipy.ndimage import zoom as scizoom
from skimage.filters import gaussian

from corruptgen.families.imagenet_c import FROST_FILES, TABLES, frost_dir, glass_shifts


def _c(name, severity):
    return tuple(TABLES[name][severity].values())


def _u8(x):
    return np.uint8(x)


def gaussian_noise(img, rng, s):
    (c,) = _c("gaussian_noise", s)
    x = np.array(img) / 255.0
    return _u8(np.clip(x + rng.normal(size=x.shape, scale=c), 0, 1) * 255)


def shot_noise(img, rng, s):
    (c,) = _c("shot_noise", s)
    x = np.array(img) / 255.0
    return _u8(np.clip(rng.poisson(x * c) / c, 0, 1) * 255)


def impulse_noise(img, rng, s):
    (c,) = _c("impulse_noise", s)
    x = sk.util.random_noise(np.array(img) / 255.0, mode="s&p", amount=c, rng=rng)
    return _u8(np.clip(x, 0, 1) * 255)


def speckle_noise(img, rng, s):
    (c,) = _c("speckle_noise", s)
    x = np.array(img) / 255.0
    return _u8(np.clip(x + x * rng.normal(size=x.shape, scale=c), 0, 1) * 255)


def gaussian_blur(img, rng, s):
    (c,) = _c("gaussian_blur", s)
    x = gaussian(np.array(img) / 255.0, sigma=c, channel_axis=-1)
    return _u8(np.clip(x, 0, 1) * 255)


def glass_blur(img, rng, s, *, per_pixel_draws=False):
    """Literal loop. The (dx, dy) of visit (h, w) come from ``glass_shifts(rng, ...)`` (what ours draws), or, with
    ``per_pixel_draws``, from one ``rng.integers(-max_delta, max_delta, size=2)`` call per visit, as the reference."""
    sigma, delta, iterations = _c("glass_blur", s)
    x = np.uint8(gaussian(np.array(img) / 255.0, sigma=sigma, channel_axis=-1) * 255)
    shifts = None if per_pixel_draws else glass_shifts(rng, x.shape[:2], delta, iterations)
    for i in range(iterations):
        for h in range(x.shape[0] - delta, delta, -1):
            for w in range(x.shape[1] - delta, delta, -1):
                if shifts is None:
                    dx, dy = rng.integers(-delta, delta, size=(2,))
                else:
                    dx, dy = shifts[i, h - delta - 1, w - delta - 1]
                h_prime, w_prime = h + dy, w + dx
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return _u8(np.clip(gaussian(x / 255.0, sigma=sigma, channel_axis=-1), 0, 1) * 255)


def _disk(radius, alias_blur):
    if radius <= 8:
        grid, ksize = np.arange(-8, 8 + 1), (3, 3)
    else:
        grid, ksize = np.arange(-radius, radius + 1), (5, 5)
    xx, yy = np.meshgrid(grid, grid)
    aliased = np.array((xx**2 + yy**2) <= radius**2, dtype=np.float32)
    aliased /= np.sum(aliased)
    return cv2.GaussianBlur(aliased, ksize=ksize, sigmaX=alias_blur)


def defocus_blur(img, rng, s):
    radius, alias = _c("defocus_blur", s)
    x = np.array(img) / 255.0
    kernel = _disk(radius, alias)
    channels = np.array([cv2.filter2D(x[:, :, d], -1, kernel) for d in range(3)]).transpose((1, 2, 0))
    return _u8(np.clip(channels, 0, 1) * 255)


def imagemagick_motion_blur(u8, radius, sigma, angle):
    """ImageMagick 6 MotionBlurImage on an 8-bit image, tap by tap with clamped (edge) coordinates, then the Q16
    quantum rounding and the PNG writer's 16 → 8 bit truncation."""
    width = 2 * math.ceil(radius) + 1
    kernel = np.array([math.exp(-(i * i) / (2.0 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma)
                       for i in range(width)])  # fmt: skip
    kernel /= kernel.sum()
    point_x, point_y = width * math.sin(math.radians(angle)), width * math.cos(math.radians(angle))
    hyp = math.hypot(point_x, point_y)
    h, w = u8.shape[:2]
    rows, cols = np.mgrid[0:h, 0:w]
    quantum = u8.astype(np.float64) * 257.0
    acc = np.zeros(u8.shape, dtype=np.float64)
    for i in range(width):
        ox = math.ceil(i * point_y / hyp - 0.5)
        oy = math.ceil(i * point_x / hyp - 0.5)
        acc += kernel[i] * quantum[np.clip(rows + oy, 0, h - 1), np.clip(cols + ox, 0, w - 1)]
    q16 = np.floor(np.clip(acc, 0, 65535) + 0.5)
    return (q16 // 257).astype(np.uint8)


def motion_blur(img, rng, s):
    radius, sigma = _c("motion_blur", s)
    return imagemagick_motion_blur(np.array(img), radius, sigma, rng.uniform(-45, 45))


def _clipped_zoom(img, zoom_factor):
    h = img.shape[0]
    ch = int(np.ceil(h / zoom_factor))
    top = (h - ch) // 2
    img = scizoom(img[top : top + ch, top : top + ch], (zoom_factor, zoom_factor, 1), order=1)
    trim_top = (img.shape[0] - h) // 2
    return img[trim_top : trim_top + h, trim_top : trim_top + h]


def zoom_blur(img, rng, s):
    end, step = _c("zoom_blur", s)
    x = (np.array(img) / 255.0).astype(np.float32)
    out = np.zeros_like(x)
    factors = np.arange(1, end, step)
    for zoom_factor in factors:
        out += _clipped_zoom(x, zoom_factor)
    x = (x + out) / (len(factors) + 1)
    return _u8(np.clip(x, 0, 1) * 255)


def snow(img, rng, s):
    c = _c("snow", s)
    x = np.array(img, dtype=np.float32) / 255.0
    layer = rng.normal(size=x.shape[:2], loc=c[0], scale=c[1])
    layer = _clipped_zoom(layer[..., np.newaxis], c[2])
    layer[layer < c[3]] = 0
    layer = (np.clip(layer.squeeze(), 0, 1) * 255).astype(np.uint8)
    layer = imagemagick_motion_blur(layer, c[4], c[5], rng.uniform(-135, -45)) / 255.0
    layer = layer[..., np.newaxis]
    h, w = x.shape[:2]
    x = c[6] * x + (1 - c[6]) * np.maximum(x, cv2.cvtColor(x, cv2.COLOR_RGB2GRAY).reshape(h, w, 1) * 1.5 + 0.5)
    return _u8(np.clip(x + layer + np.rot90(layer, k=2), 0, 1) * 255)


def frost(img, rng, s):
    c = _c("frost", s)
    idx = rng.integers(5)
    texture = cv2.imread(str(frost_dir() / FROST_FILES[idx]))
    h, w = img.shape[:2]
    x_start, y_start = rng.integers(0, texture.shape[0] - h), rng.integers(0, texture.shape[1] - w)
    texture = texture[x_start : x_start + h, y_start : y_start + w][..., [2, 1, 0]]
    return _u8(np.clip(c[0] * np.array(img) + c[1] * texture, 0, 255))


def plasma_fractal(rng, mapsize=256, wibbledecay=3):
    maparray = np.empty((mapsize, mapsize), dtype=np.float64)
    maparray[0, 0] = 0
    stepsize = mapsize
    wibble = 100

    def wibbledmean(array):
        return array / 4 + wibble * rng.uniform(-wibble, wibble, array.shape)

    def fillsquares():
        cornerref = maparray[0:mapsize:stepsize, 0:mapsize:stepsize]
        squareaccum = cornerref + np.roll(cornerref, shift=-1, axis=0)
        squareaccum += np.roll(squareaccum, shift=-1, axis=1)
        maparray[stepsize // 2 : mapsize : stepsize, stepsize // 2 : mapsize : stepsize] = wibbledmean(squareaccum)

    def filldiamonds():
        drgrid = maparray[stepsize // 2 : mapsize : stepsize, stepsize // 2 : mapsize : stepsize]
        ulgrid = maparray[0:mapsize:stepsize, 0:mapsize:stepsize]
        ltsum = drgrid + np.roll(drgrid, 1, axis=0) + (ulgrid + np.roll(ulgrid, -1, axis=1))
        maparray[0:mapsize:stepsize, stepsize // 2 : mapsize : stepsize] = wibbledmean(ltsum)
        ttsum = drgrid + np.roll(drgrid, 1, axis=1) + (ulgrid + np.roll(ulgrid, -1, axis=0))
        maparray[stepsize // 2 : mapsize : stepsize, 0:mapsize:stepsize] = wibbledmean(ttsum)

    while stepsize >= 2:
        fillsquares()
        filldiamonds()
        stepsize //= 2
        wibble /= wibbledecay
    maparray -= maparray.min()
    return maparray / maparray.max()


def fog(img, rng, s):
    c = _c("fog", s)
    x = np.array(img) / 255.0
    max_val = x.max()
    x += c[0] * plasma_fractal(rng, wibbledecay=c[1])[:224, :224][..., np.newaxis]
    return _u8(np.clip(x * max_val / (max_val + c[0]), 0, 1) * 255)


def brightness(img, rng, s):
    (c,) = _c("brightness", s)
    x = sk.color.rgb2hsv(np.array(img) / 255.0)
    x[:, :, 2] = np.clip(x[:, :, 2] + c, 0, 1)
    return _u8(np.clip(sk.color.hsv2rgb(x), 0, 1) * 255)


def saturate(img, rng, s):
    c = _c("saturate", s)
    x = sk.color.rgb2hsv(np.array(img) / 255.0)
    x[:, :, 1] = np.clip(x[:, :, 1] * c[0] + c[1], 0, 1)
    return _u8(np.clip(sk.color.hsv2rgb(x), 0, 1) * 255)


def contrast(img, rng, s):
    (c,) = _c("contrast", s)
    x = np.array(img) / 255.0
    means = np.mean(x, axis=(0, 1), keepdims=True)
    return _u8(np.clip((x - means) * c + means, 0, 1) * 255)


def elastic_transform(img, rng, s):
    c = _c("elastic_transform", s)
    image = np.array(img, dtype=np.float32) / 255.0
    shape = image.shape
    shape_size = shape[:2]
    center_square = np.float32(shape_size) // 2
    square_size = min(shape_size) // 3
    pts1 = np.float32([center_square + square_size, [center_square[0] + square_size, center_square[1] - square_size],
                       center_square - square_size])  # fmt: skip
    pts2 = pts1 + rng.uniform(-c[2], c[2], size=pts1.shape).astype(np.float32)
    M = cv2.getAffineTransform(pts1, pts2)
    image = cv2.warpAffine(image, M, shape_size[::-1], borderMode=cv2.BORDER_REFLECT_101)
    dx = (gaussian(rng.uniform(-1, 1, size=shape[:2]), c[1], mode="reflect", truncate=3) * c[0]).astype(np.float32)
    dy = (gaussian(rng.uniform(-1, 1, size=shape[:2]), c[1], mode="reflect", truncate=3) * c[0]).astype(np.float32)
    dx, dy = dx[..., np.newaxis], dy[..., np.newaxis]
    x, y, z = np.meshgrid(np.arange(shape[1]), np.arange(shape[0]), np.arange(shape[2]))
    indices = np.reshape(y + dy, (-1, 1)), np.reshape(x + dx, (-1, 1)), np.reshape(z, (-1, 1))
    return _u8(np.clip(map_coordinates(image, indices, order=1, mode="reflect").reshape(shape), 0, 1) * 255)


def pixelate(img, rng, s):
    (c,) = _c("pixelate", s)
    h, w = img.shape[:2]
    x = Image.fromarray(img).resize((int(w * c), int(h * c)), Image.Resampling.BOX)
    return np.uint8(x.resize((w, h), Image.Resampling.BOX))


def jpeg_compression(img, rng, s):
    (c,) = _c("jpeg_compression", s)
    output = io.BytesIO()
    Image.fromarray(img).save(output, "JPEG", quality=c)
    return np.uint8(Image.open(output))


def spatter(img, rng, s):
    c = _c("spatter", s)
    x = np.array(img, dtype=np.float32) / 255.0
    liquid_layer = rng.normal(size=x.shape[:2], loc=c[0], scale=c[1])
    liquid_layer = gaussian(liquid_layer, sigma=c[2])
    liquid_layer[liquid_layer < c[3]] = 0
    if c[5] == 0:
        liquid_layer = (liquid_layer * 255).astype(np.uint8)
        dist = 255 - cv2.Canny(liquid_layer, 50, 150)
        dist = cv2.distanceTransform(dist, cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.blur(dist, (3, 3)).astype(np.uint8)
        dist = cv2.equalizeHist(dist)
        ker = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
        dist = cv2.filter2D(dist, cv2.CV_8U, ker)
        dist = cv2.blur(dist, (3, 3)).astype(np.float32)
        m = cv2.cvtColor(liquid_layer * dist, cv2.COLOR_GRAY2BGRA)
        m /= np.max(m, axis=(0, 1))
        m *= c[4]
        ones = np.ones_like(m[..., :1])
        color = np.concatenate((175 / 255.0 * ones, 238 / 255.0 * ones, 238 / 255.0 * ones), axis=2)
        color = cv2.cvtColor(color, cv2.COLOR_BGR2BGRA)
        x = cv2.cvtColor(x, cv2.COLOR_BGR2BGRA)
        return _u8(cv2.cvtColor(np.clip(x + m * color, 0, 1), cv2.COLOR_BGRA2BGR) * 255)
    m = np.where(liquid_layer > c[3], 1, 0)
    m = gaussian(m.astype(np.float32), sigma=c[4])
    m[m < 0.8] = 0
    ones = np.ones_like(x[..., :1])
    color = np.concatenate((63 / 255.0 * ones, 42 / 255.0 * ones, 20 / 255.0 * ones), axis=2)
    color *= m[..., np.newaxis]
    x *= 1 - m[..., np.newaxis]
    return _u8(np.clip(x + color, 0, 1) * 255)


REFERENCE = {
    "gaussian_noise": gaussian_noise, "shot_noise": shot_noise, "impulse_noise": impulse_noise,
    "defocus_blur": defocus_blur, "glass_blur": glass_blur, "motion_blur": motion_blur, "zoom_blur": zoom_blur,
    "snow": snow, "frost": frost, "fog": fog, "brightness": brightness, "contrast": contrast,
    "elastic_transform": elastic_transform, "pixelate": pixelate, "jpeg_compression": jpeg_compression,
    "speckle_noise": speckle_noise, "gaussian_blur": gaussian_blur, "spatter": spatter, "saturate": saturate,
}  # fmt: skip

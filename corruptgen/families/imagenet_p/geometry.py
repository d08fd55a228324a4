"""Geometry of the ImageNet-P sequences: torchvision's ``TF.affine`` (reference era), the tilt homography, crops.

The reference (hendrycks/robustness ``ImageNet-P/create_p/make_imagenet_p.py``) warps the ``Resize(256)`` image with
``torchvision.transforms.functional.affine(..., resample=...)`` (torchvision ≤ 0.7, which calls PIL) and then takes
``CenterCrop(224)``. torchvision is not a dependency, so this module rebuilds the same call on PIL:

* inverse matrix: torchvision ≤ 0.7 ``_get_inverse_affine_matrix`` (single x-shear angle, ``RSS = [[cos a, -sin(a+sh)],
  [sin a, cos(a+sh)]] * scale``, ``M⁻¹ = C · RSS⁻¹ · C⁻¹ · T⁻¹``), positive angles turn clockwise on screen;
* centre: ``(w / 2 + 0.5, h / 2 + 0.5)`` in PIL's continuous coordinates, where pixel ``(i, j)`` covers
  ``[i, i + 1) × [j, j + 1)`` — i.e. the pixel *index* ``(w / 2, h / 2)`` (torchvision ≥ 0.8 dropped the ``+ 0.5``);
* sampling: PIL maps each output pixel centre ``(x + 0.5, y + 0.5)`` through the matrix to ``(u, v)``; NEAREST takes
  pixel ``(floor u, floor v)``, BILINEAR interpolates at index ``(u - 0.5, v - 0.5)`` with the edge pixels repeated
  for points inside ``[0, w) × [0, h)``; points outside are filled with 0 (black); bilinear values are truncated.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from PIL import Image

NEAREST = Image.Resampling.NEAREST
BILINEAR = Image.Resampling.BILINEAR


def inverse_affine_matrix(
    center: tuple[float, float], angle: float, translate: tuple[float, float], scale: float, shear: float
) -> tuple[float, float, float, float, float, float]:
    """torchvision ≤ 0.7 ``_get_inverse_affine_matrix``: the output→input map ``(a, b, c, d, e, f)`` PIL expects."""
    rot, sh = math.radians(angle), math.radians(shear)
    inv_scale = 1.0 / scale
    det = math.cos(rot + sh) * math.cos(rot) + math.sin(rot + sh) * math.sin(rot)
    m = [math.cos(rot + sh), math.sin(rot + sh), 0.0, -math.sin(rot), math.cos(rot), 0.0]
    m = [inv_scale / det * v for v in m]
    cx, cy = center
    tx, ty = translate
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return (m[0], m[1], m[2], m[3], m[4], m[5])


def affine(
    image: np.ndarray,
    *,
    angle: float = 0.0,
    translate: tuple[float, float] = (0.0, 0.0),
    scale: float = 1.0,
    shear: float = 0.0,
    resample: Image.Resampling = NEAREST,
) -> np.ndarray:
    """``TF.affine(img, angle, translate, scale, shear, resample)`` of torchvision ≤ 0.7 on an HxWx3 uint8 array."""
    h, w = image.shape[:2]
    matrix = inverse_affine_matrix((w * 0.5 + 0.5, h * 0.5 + 0.5), angle, translate, scale, shear)
    out = Image.fromarray(image).transform((w, h), Image.Transform.AFFINE, matrix, resample, fillcolor=(0, 0, 0))
    return np.asarray(out)


def center_crop(image: np.ndarray, size: int) -> np.ndarray:
    """torchvision ``CenterCrop(size)``: offsets ``round((h - size) / 2)`` (Python rounding); zero-pads small inputs."""
    h, w = image.shape[:2]
    if h < size or w < size:
        ph, pw = max(size - h, 0), max(size - w, 0)
        pad = ((ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2)) + ((0, 0),) * (image.ndim - 2)
        image = np.pad(image, pad)
        h, w = image.shape[:2]
    top, left = round((h - size) / 2), round((w - size) / 2)
    return image[top : top + size, left : left + size]


def tilt_matrix(width: int, height: int, degrees: float) -> np.ndarray:
    """The reference tilt homography (3×3) for ``phi = theta = degrees``: ``P2 · T · RX · RY · P1``."""
    w, h = float(width), float(height)
    phi = theta = np.deg2rad(degrees)
    f = np.sqrt(w**2 + h**2)
    p1 = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1], [0, 0, 1]])
    rx = np.array([[1, 0, 0, 0], [0, np.cos(theta), -np.sin(theta), 0], [0, np.sin(theta), np.cos(theta), 0],
                   [0, 0, 0, 1]])  # fmt: skip
    ry = np.array([[np.cos(phi), 0, -np.sin(phi), 0], [0, 1, 0, 0], [np.sin(phi), 0, np.cos(phi), 0], [0, 0, 0, 1]])
    t = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, f], [0, 0, 0, 1]])
    p2 = np.array([[f, 0, w / 2, 0], [0, f, h / 2, 0], [0, 0, 1, 0]])
    return p2 @ t @ rx @ ry @ p1


def tilt(image: np.ndarray, degrees: float) -> np.ndarray:
    """``cv2.warpPerspective(x, mat, (w, h))`` with the reference defaults (bilinear, constant 0 border)."""
    h, w = image.shape[:2]
    return cv2.warpPerspective(image, tilt_matrix(w, h, degrees), (w, h))

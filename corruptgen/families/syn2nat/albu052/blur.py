"""0.5.2 blur ports: GaussianBlur (sigma 0, 0.5.2 kernel-size sampling) and MotionBlur (0.5.2 line generator)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from ._common import ImageOnlyTransform

# ----------------------------------------------------------------------------------------------------------------------
# GaussianBlur
# ----------------------------------------------------------------------------------------------------------------------


def gaussian_blur_image(img: np.ndarray, ksize: int) -> np.ndarray:
    """``cv2.GaussianBlur`` with a ``ksize`` square kernel and sigma 0 (OpenCV: ``0.3*((k-1)/2-1)+0.8``)."""
    return cv2.GaussianBlur(img, (ksize, ksize), 0)


class LegacyGaussianBlur(ImageOnlyTransform):
    """albumentations 0.5.2 ``GaussianBlur`` with ``sigma_limit=0`` (sigma derived by OpenCV from the kernel size).

    Kernel size: ``k = integer in [low, high]`` inclusive; an even ``k`` becomes ``(k + 1) % (high + 1)``, so for
    (9, 13) P(9)=.2, P(11)=.4, P(13)=.4. 0.5.2 drew ``k`` from numpy's global RNG; here ``random_generator``.
    2.x cannot use sigma 0. Params: ``ksize``.
    """

    def __init__(self, blur_limit: tuple[int, int] = (9, 13), p: float = 1.0) -> None:
        super().__init__(p=p)
        lo, hi = int(blur_limit[0]), int(blur_limit[1])
        if not (3 <= lo <= hi and lo % 2 == 1 and hi % 2 == 1):
            raise ValueError(f"blur_limit must be two odd sizes >= 3 in order, got {blur_limit}")
        self.blur_limit = (lo, hi)

    def get_params(self) -> dict[str, Any]:
        lo, hi = self.blur_limit
        k = int(self.random_generator.integers(lo, hi + 1))
        if k % 2 == 0:
            k = (k + 1) % (hi + 1)
        return {"ksize": k}

    def apply(self, img: np.ndarray, ksize: int, **params: Any) -> np.ndarray:
        return gaussian_blur_image(img, ksize)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("blur_limit",)


# ----------------------------------------------------------------------------------------------------------------------
# MotionBlur
# ----------------------------------------------------------------------------------------------------------------------


def motion_blur_kernel(ksize: int, xs: int, ys: int, xe: int, ye: int) -> np.ndarray:
    """A ``ksize x ksize`` float32 kernel: a 1-px ``cv2.line`` from (xs, ys) to (xe, ye), normalised to sum 1."""
    kernel = np.zeros((ksize, ksize), dtype=np.uint8)
    cv2.line(kernel, (xs, ys), (xe, ye), 1, thickness=1)
    return kernel.astype(np.float32) / np.sum(kernel)


def motion_blur_image(img: np.ndarray, ksize: int, xs: int, ys: int, xe: int, ye: int) -> np.ndarray:
    """Convolve (``cv2.filter2D``, reflect-101 border) with :func:`motion_blur_kernel`."""
    return cv2.filter2D(img, -1, motion_blur_kernel(ksize, xs, ys, xe, ye))


class LegacyMotionBlur(ImageOnlyTransform):
    """albumentations 0.5.2 ``MotionBlur``: convolution with a random line segment inside a ``k x k`` box.

    ``k`` is uniform over the odd sizes in ``blur_limit``; the end points are ``xs, xe = randint(0, k-1)``, and
    ``ys, ye`` two *distinct* rows if ``xs == xe`` (so the line is never a dot) else two ``randint(0, k-1)``. The line
    need not pass through the centre (2.x's generator differs). All ``py_random`` in 0.5.2's order.
    Params: ``ksize``, ``xs``, ``ys``, ``xe``, ``ye``.
    """

    def __init__(self, blur_limit: tuple[int, int] = (11, 17), p: float = 1.0) -> None:
        super().__init__(p=p)
        lo, hi = int(blur_limit[0]), int(blur_limit[1])
        if not 3 <= lo <= hi:
            raise ValueError(f"blur_limit must satisfy 3 <= low <= high, got {blur_limit}")
        self.blur_limit = (lo, hi)

    def get_params(self) -> dict[str, Any]:
        rnd = self.py_random
        lo, hi = self.blur_limit
        k = rnd.choice(range(lo, hi + 1, 2))
        xs, xe = rnd.randint(0, k - 1), rnd.randint(0, k - 1)
        if xs == xe:
            ys, ye = rnd.sample(range(k), 2)
        else:
            ys, ye = rnd.randint(0, k - 1), rnd.randint(0, k - 1)
        return {"ksize": k, "xs": xs, "ys": ys, "xe": xe, "ye": ye}

    def apply(self, img: np.ndarray, ksize: int, xs: int, ys: int, xe: int, ye: int, **params: Any) -> np.ndarray:
        return motion_blur_image(img, ksize, xs, ys, xe, ye)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("blur_limit",)

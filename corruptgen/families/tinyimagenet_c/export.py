"""The ``tinyimagenet-c`` export layout: Tiny-ImageNet-C's released folders ``<corruption>/<severity>/<wnid>/<file>``
(``make_tinyimagenet_c.py`` saves each image there), which is the ``imagenet-c`` layout: this registers its name."""

from __future__ import annotations

from ...export.imagenet_c import imagenet_c
from ...export.layouts import register_layout

register_layout(
    "tinyimagenet-c",
    summary="<corruption>/<severity>/<wnid>/<key>.JPEG: Tiny-ImageNet-C's folders (the imagenet-c layout)",
    options={"class-dirs": "class folder names: auto (default) | wnid | name | index"},
)(imagenet_c)

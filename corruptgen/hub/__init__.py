"""Publishing and consuming builds: dataset cards, Hub upload, `datasets` / torch loaders.

Everything heavy (``datasets``, ``huggingface_hub``, ``torch``, ``webdataset``) is imported on first use, so
``import corruptgen`` stays fast.

>>> import corruptgen
>>> ds = corruptgen.load("./corruptgen-out/syn2nat", subset="solarize")  # doctest: +SKIP
>>> loader = corruptgen.torch_loader("./corruptgen-out/syn2nat", subsets=["solarize"], batch_size=64)  # doctest: +SKIP
"""

from __future__ import annotations

from .card import render_card, write_card
from .load import load, torch_loader
from .push import push

__all__ = ["load", "push", "render_card", "torch_loader", "write_card"]

"""OpticsBench and OpticsBenchRG (Müller, Braun, Keuper, ICCVW 2023): 4 aberration corruptions × 5 severities.

Subsets ``<corruption>_s<severity>`` for astigmatism, coma, defocus_spherical and trefoil (20, the default) plus the
clean reference; ``defocus_disk_s<severity>`` (the ImageNet-C disk the paper compares against) on request. Family
options (OpticsBench ``generate_datasets.py``):

* ``severities``: ``"1,3,5"`` or ``"1..5"`` (or a list of ints).
* ``kernels``: ``opticsbench`` / ``opticsbench_rg`` (``kernels/*.npz``, the default of each
  benchmark) or a path to an ``.npz`` or a published ``.pt`` stack. Its source and sha256 go into every subset's
  options, so they are part of the plan id.
* ``compat="iccvw2023"``: the paper-era (v1.0) generator's quirks — zero padding, the float32 truncation to uint8,
  JPEG quality 85, Resize(256) + CenterCrop(224), and the batch-128 mode-choice pattern (see docs/opticsbench.md for
  what needs the sample's source index).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import CorruptgenError
from ...family.benchmark import CLEAN, Benchmark, Grid, Option, parse_levels, register_benchmark
from ...family.plan import Plan, SourceSpec, Subset
from .corruptions import CORRUPTIONS, FAMILY, SEVERITIES, load_stack, resolve_kernels

__all__ = ["COMPAT_MODES", "OpticsBenchmark", "opticsbench", "opticsbench_rg", "parse_severities"]

CITE = ("P. Müller, A. Braun, M. Keuper. Classification robustness to common optical aberrations. "
        "ICCV 2023 Workshops (AROW), pp. 3632-3643 (arXiv:2308.15499).")  # fmt: skip
COMPAT_MODES = ("iccvw2023",)
DISK = "defocus_disk"
#: The published stack (OpticsBench or OpticsBenchRG) each benchmark must not be given by mistake.
_WRONG_PUBLISHED = {"opticsbench": "kernel_stack_rg_iccvw.pt", "opticsbench-rg": "kernel_stack_iccvw.pt"}


def parse_severities(value: str | int | Sequence[int] | None) -> tuple[int, ...]:
    """``None`` → 1..5; ``"1,3,5"``, ``"1..5"``, an int or a list of ints → sorted unique severities."""
    return SEVERITIES if value is None else parse_levels(value, SEVERITIES, "--severities")


def _subset(name: str, severity: int, options: dict[str, Any] | None = None) -> Subset:
    return Subset(name=f"{name}_s{severity}", corruption=f"{FAMILY}/{name}", severity=severity,
                  options=tuple(sorted((options or {"severity": severity}).items())))  # fmt: skip


OPTIONS = (
    Option("severities", "severities to build, e.g. 1,3,5 or 1..5 (default all)"),
    Option("kernels", "kernel stack: opticsbench, opticsbench_rg, a .npz or a published .pt"),
    Option("compat", "reproduce a paper's generation quirks (e.g. iccvw2023)"),
)


GRID = Grid((*CORRUPTIONS, DISK), SEVERITIES)


@dataclass(frozen=True)
class OpticsBenchmark(Benchmark):
    """OpticsBench family: severities, kernel stack and compat options resolved into the subsets' options."""

    default_kernels: str = "opticsbench"

    def select(
        self,
        names: str | Sequence[str] | None,
        severities: str | int | Sequence[int] | None = None,
        kernels: str | None = None,
        compat: str | None = None,
        **other: Any,
    ) -> tuple[Subset, ...]:
        if other:
            flags = ", ".join("--" + k.replace("_", "-") for k in other)
            raise CorruptgenError(f"{self.name} takes no option {flags} (it has --severities, --kernels, --compat)")
        mode = _compat(compat)
        chosen = None if severities is None else parse_severities(severities)
        wanted = GRID.resolve(names, chosen, self.default_subsets, self.name)
        stack_option = sha = None
        if any(n != "clean" and not n.startswith(DISK) for n in wanted):
            _, meta = load_stack(kernels if kernels else self.default_kernels)
            if meta.get("published") == _WRONG_PUBLISHED.get(self.name):
                raise CorruptgenError(f"{self.name}: --kernels {meta['published']} is the other benchmark's stack")
            stack_option, sha = meta["option"], meta["sha256"]
        quantize = "truncate" if mode else "round"
        out = []
        for name in wanted:
            base = self.subsets[name]
            if base.corruption is None:
                out.append(base)
                continue
            options: dict[str, Any] = {"severity": base.severity, "quantize": quantize}
            if name.startswith(DISK):
                options["padding"] = "reflect"  # ImageNet-C: cv2.filter2D, BORDER_REFLECT_101
            else:
                options.update(padding="zero", kernels=stack_option, kernels_sha256=sha,
                               choice="iccvw2023" if mode else "rng")  # fmt: skip
            out.append(_subset(base.corruption.split("/", 1)[1], base.severity, options))
        return tuple(out)

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Canonical options for the plan id: severities as ``"1,3"``, compat lower-case, kernels resolved (a built-in
        id stays an id, a path becomes absolute)."""
        out = super().family_options(options)
        if "severities" in out:
            out["severities"] = ",".join(map(str, parse_severities(out["severities"])))
        if "compat" in out:
            out["compat"] = _compat(out["compat"])
            if out["compat"] is None:
                del out["compat"]
        if "kernels" in out:
            out["kernels"] = resolve_kernels(out["kernels"], self.default_kernels)[0]
        return out

    def plan(self, *, source: SourceSpec | str = "samples", subsets=None, clean: bool = True,
             preprocess: str | None = None, size: int | None = None, **options: Any) -> Plan:  # fmt: skip
        """As :meth:`Benchmark.plan`; ``compat="iccvw2023"`` also pins JPEG q85 and the imagenet 224 preprocessing."""
        if _compat(options.get("compat")):
            fmt, quality = options.get("image_format", "jpg"), options.get("quality", 85)
            given = {"--format": fmt != "jpg", "--quality": quality != 85}
            if any(given.values()):
                raise CorruptgenError("--compat iccvw2023 writes JPEG quality 85 as the paper's generator did; "
                                      f"drop {' and '.join(f for f, on in given.items() if on)}")  # fmt: skip
            given = {"--preprocess": preprocess not in (None, "imagenet"), "--size": size is not None}
            if any(given.values()):
                raise CorruptgenError("--compat iccvw2023 uses Resize(256) + CenterCrop(224) (--preprocess imagenet); "
                                      f"drop {' and '.join(f for f, on in given.items() if on)}")  # fmt: skip
        return super().plan(source=source, subsets=subsets, clean=clean, preprocess=preprocess, size=size, **options)


def _compat(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    mode = str(value).lower()
    if mode not in COMPAT_MODES:
        raise CorruptgenError(f"unknown --compat {value!r}; use one of {', '.join(COMPAT_MODES)}")
    return mode


def _make(name: str, title: str, default_kernels: str) -> OpticsBenchmark:
    main = [f"{c}_s{s}" for c in CORRUPTIONS for s in SEVERITIES]
    subsets = {"clean": CLEAN}
    subsets.update({n: _subset(n.rsplit("_s", 1)[0], int(n.rsplit("_s", 1)[1])) for n in main})
    subsets.update({f"{DISK}_s{s}": _subset(DISK, s) for s in SEVERITIES})
    return OpticsBenchmark(name=name, title=title, cite=CITE, subsets=subsets, default_subsets=tuple(main),
                           preprocess="imagenet", metrics="optics", default_kernels=default_kernels,
                           options=OPTIONS)  # fmt: skip


@register_benchmark("opticsbench")
@cache
def opticsbench() -> OpticsBenchmark:
    """OpticsBench: the standard kernel stack (default ``kernels/opticsbench.npz``)."""
    return _make("opticsbench", "OpticsBench", "opticsbench")


@register_benchmark("opticsbench-rg")
@cache
def opticsbench_rg() -> OpticsBenchmark:
    """OpticsBenchRG: red and blue channels share the blue kernel (default ``kernels/opticsbench_rg.npz``)."""
    return _make("opticsbench-rg", "OpticsBenchRG", "opticsbench_rg")

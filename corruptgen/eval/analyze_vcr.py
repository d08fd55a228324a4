"""Command-line pieces of VCR curve estimation: the ``--vcr-*`` flags that ``eval``, ``report`` and ``analyze
vcr-similarity`` share, and ``corruptgen analyze vcr-similarity`` (Shen et al., WACV 2025, §4.4, App. E.1)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..commands import positive_int
from ..errors import CorruptgenError


def add_vcr_flags(g: Any) -> None:
    """``--vcr-bins``, ``--vcr-min-per-bin``, the curve estimator (``--vcr-spline``, ``--vcr-smoothing``,
    ``--vcr-tau``), the minimum support (``--vcr-min-support``) and the bands (``--vcr-band-resamples``) on a parser
    or argument group."""
    g.add_argument("--vcr-bins", type=positive_int, default=40, help="VCR: Δv bins M (default 40)")
    g.add_argument("--vcr-min-per-bin", type=positive_int, default=20,
                   help="VCR: minimum images L per bin (default 20)")  # fmt: skip
    g.add_argument("--vcr-spline", choices=("quantile", "least-squares"), default="quantile",
                   help="VCR curve: monotone quantile smoothing spline (default; Koenker, Ng & Portnoy 1994) or "
                   "the least-squares smoothing spline")  # fmt: skip
    g.add_argument("--vcr-smoothing", type=_smoothing, default=None, metavar="LAMBDA|sic",
                   help="VCR spline penalty λ (default 3e-4 quantile, 1e-4 least squares); 'sic': by SIC")  # fmt: skip
    g.add_argument("--vcr-tau", type=float, default=0.5, help="VCR quantile spline: the quantile τ (default 0.5)")
    g.add_argument("--vcr-min-support", type=float, default=0.5, metavar="SHARE",
                   help="VCR: share of the bins that must hold >= L images for R̂ to be estimated (default 0.5; "
                   "below it R̂, HMRI and MRSI are null with the reason)")  # fmt: skip
    g.add_argument("--vcr-band-resamples", type=int, default=500,
                   help="VCR: bootstrap resamples of the 83 %% bands (default 500; 0 = no bands)")  # fmt: skip
    g.add_argument("--vcr-band-bias-aware", choices=("auto", "on", "off"), nargs="?", const="on", default="auto",
                   help="VCR: widen the bands by the bootstrap's smoothing-bias estimate: auto (default) for curves "
                   "of 3,000 images and more, on (the flag alone) or off")  # fmt: skip


def _smoothing(text: str) -> float | str:
    """argparse type of ``--vcr-smoothing``: a non-negative number or ``sic``."""
    if text.lower() == "sic":
        return "sic"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'sic', got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {text}")
    return value


def vcr_settings(args: argparse.Namespace, **extra: Any):
    """The :class:`~corruptgen.eval.metrics.vcr.VCRSettings` of the ``--vcr-*`` flags (and ``extra`` fields)."""
    from .metrics.vcr import VCRSettings

    return VCRSettings(bins=args.vcr_bins, min_per_bin=args.vcr_min_per_bin, lam=args.vcr_smoothing,
                       spline=args.vcr_spline, tau=args.vcr_tau, band_resamples=args.vcr_band_resamples,
                       min_support=args.vcr_min_support,
                       band_bias_aware={"on": True, "off": False}.get(args.vcr_band_bias_aware, "auto"),
                       **extra)  # fmt: skip


def add_vcr_similarity(asub: Any) -> None:
    """``corruptgen analyze vcr-similarity`` on the ``analyze`` sub-parsers."""
    from .vcr_similarity import BAND_KINDS

    q = asub.add_parser(
        "vcr-similarity",
        help="visually similar corruption functions: do their VCR curves differ significantly (VCR §4.4)?",
        description="Compares the VCR curves (accuracy s_a, consistency s_p) of several corruption functions for "
        "each observer: humans (the toolbox's human CSVs, as --human reads them) or a model (results files of "
        "corruptgen eval, or toolbox tables with a model column). For every pair: the delta_v ranges where the curves "
        "differ significantly (a 5 % test of the whole curve by default, as the paper's 83 % overlap rule is for one "
        "point), a verdict (similar = no difference over the compared range for every property), and the classes "
        "that follow (Shen et al., WACV 2025, section 4.4, Fig. 8, Fig. 12, App. E.1).",
    )
    q.add_argument("inputs", nargs="+", help="human (or model) CSV files and/or results-*.json files or directories")
    q.add_argument("--out", default="vcr-similarity", help="output directory (default vcr-similarity/)")
    q.add_argument("--property", choices=("a", "p", "both"), default="both",
                   help="accuracy (a), consistency (p) or both (default)")  # fmt: skip
    q.add_argument(
        "--bands",
        choices=BAND_KINDS,
        default=BAND_KINDS[0],
        help="test the whole curve at once (simultaneous, default) or each delta_v alone (pointwise)",
    )
    q.add_argument("--alpha", type=float, default=0.05, help="level of the test (default 0.05)")
    q.add_argument("--range", dest="within", default=None, metavar="LO,HI",
                   help="compare over this delta_v range (default: where both curves have data)")  # fmt: skip
    add_vcr_flags(q.add_argument_group("curve options (human CSVs; results files keep their own curves)"))


def run_vcr_similarity(args: argparse.Namespace) -> int:
    """Handler of ``corruptgen analyze vcr-similarity``."""
    from .vcr_similarity import vcr_similarity

    within = None
    if args.within:
        try:
            within = tuple(float(v) for v in args.within.split(","))
        except ValueError:
            within = ()
        if len(within) != 2 or not 0 <= within[0] < within[1] <= 1:
            raise CorruptgenError(f"--range expects LO,HI with 0 <= LO < HI <= 1, got {args.within!r}")
    props = ("a", "p") if args.property == "both" else (args.property,)
    res = vcr_similarity(args.inputs, out=args.out, settings=vcr_settings(args), properties=props, within=within,
                         bands=args.bands, alpha=args.alpha)  # fmt: skip
    names = {"a": "s_a", "p": "s_p"}
    for observer, obs in res["observers"].items():
        print(f"{observer}: {len(obs['functions'])} functions, {args.bands} test at {args.alpha:g}, "
              f"{', '.join(names[p] for p in props)}")  # fmt: skip
        for e in obs["pairs"]:
            a, b = e["functions"]
            if e["similar"]:
                print(f"  similar  {a} ~ {b}")
                continue
            where = "; ".join(f"{names[p]} at Δv " + ", ".join(f"{lo:.2f}–{hi:.2f}" for lo, hi in v["differ"])
                              for p, v in e["by_property"].items() if v["differ"])  # fmt: skip
            print(f"  differ   {a} vs {b}: {where or 'no common Δv range with data'}")
        print("  classes: " + ", ".join("{" + ", ".join(c) + "}" for c in obs["classes"]))
        for name, why in obs["skipped"].items():
            print(f"  skipped {name}: {why}", file=sys.stderr)
    print(f"wrote {args.out}/vcr-similarity.json and {len(res['plots'])} plot(s)")
    return 0

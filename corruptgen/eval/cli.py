"""Subcommands ``eval``, ``report`` and ``analyze`` (added to the ``corruptgen`` command by ``add_commands``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..commands import positive_int, register_commands
from ..errors import CorruptgenError
from ..wording import counted
from .analyze_vcr import add_vcr_flags, add_vcr_similarity, run_vcr_similarity, vcr_settings

UNITS = ("percent", "fraction")  # accuracy units of the Algorithm 2 tables (metrics.syn2nat.UNITS)


def _metric_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("metric options")
    g.add_argument(
        "--reference",
        default=None,
        help="results file of a reference model for CE/mCE and mFR/mT5D "
        "(default: the AlexNet ImageNet-C table; no AlexNet ImageNet-P values are available)",
    )
    g.add_argument(
        "--human",
        action="append",
        default=[],
        metavar="[SUBSET=]CSV",
        help="VCR human data (vd_score, orig_pred, transf_pred, label[, transformation]); repeatable",
    )
    g.add_argument(
        "--sixteen",
        choices=("argmax", "probability"),
        default="argmax",
        help="VCR: 1000 → 16 classes by argmax-then-map (default) or mean category probability",
    )
    add_vcr_flags(g)
    g.add_argument(
        "--er-beta",
        default=None,
        metavar="BETA[,B]",
        help="effective robustness line acc = BETA*clean + B (report fits it over models when omitted)",
    )
    g.add_argument("--er-logit", action="store_true", help="effective robustness in logit space (Taori et al.)")
    g.add_argument("--no-accuracy", dest="accuracy", action="store_false",
                   help="label-free data: compute consistency/flip metrics only instead of failing")  # fmt: skip


def _options(args):
    from .metrics import MetricOptions
    from .metrics.vcr import load_human_csv
    from .results import load_results

    humans = {}
    for spec in args.human:
        subset, eq, path = spec.partition("=")
        if not eq:
            subset, path = "", spec
        data = load_human_csv(path)
        if subset:
            if len(data) > 1:
                raise CorruptgenError(f"{path} holds several transformations; pass it without {subset}=")
            humans[subset] = next(iter(data.values()))
        else:
            humans.update(data)
    beta, intercept = None, 0.0
    if args.er_beta:
        try:
            parts = [float(v) for v in args.er_beta.split(",")]
        except ValueError:
            raise CorruptgenError(f"--er-beta expects BETA or BETA,B, got {args.er_beta!r}") from None
        beta, intercept = parts[0], (parts[1] if len(parts) > 1 else 0.0)
    settings = vcr_settings(args, sixteen=args.sixteen)
    return MetricOptions(reference=load_results(args.reference) if args.reference else None, humans=humans or None,
                         vcr=settings, er_beta=beta, er_intercept=intercept, er_logit=args.er_logit,
                         accuracy=args.accuracy)  # fmt: skip


def _cmd_eval(args) -> int:
    from .runner import evaluate

    if args.streaming is None and args.no_streaming:
        args.streaming = False
    out = args.out or str(Path("results") / Path(str(args.source).rstrip("/")).name)
    run = evaluate(
        args.source, args.model or ["efficientnet_lite0"], subsets=args.subsets, clean=args.clean, out=out,
        device=args.device, batch_size=args.batch_size, workers=args.workers, streaming=args.streaming,
        revision=args.revision, limit=args.limit, verify=args.verify, predictions=args.predictions,
        report=args.report, progress=args.progress, options=_options(args), labels=args.labels,
        class_map=args.class_map, attacks=args.attacks,
    )  # fmt: skip
    print(run.summary())
    from .metrics.vcr import refusals

    for r in run.results:  # one line per VCR subset whose R̂ (or HMRI/MRSI) is null, with the reason
        for line in refusals(r["metrics"].get("vcr") or {}):
            print(f"note: {r['model']['name']}: {line}", file=sys.stderr)
    print(f"wrote {counted(len(run.files), 'file')} to {out}")
    return 0


def _cmd_report(args) -> int:
    from .report import collect, recompute, recomputed_path, write_report
    from .results import write_json

    results = collect(args.results)
    options = _options(args)
    if args.recompute:
        results = [recompute(r, options) for r in results]
        for r in results:
            path = recomputed_path(r)
            write_json(path, r)
            print(f"wrote recomputed results {path}")
    files = write_report(results, args.out, options=options)
    print(f"report for {counted(len(results), 'result file')}: {files[0]} (+{counted(len(files) - 1, 'file')})")
    return 0


def _cmd_analyze(args) -> int:
    handlers = {"overlap": _analyze_overlap, "correlation": _analyze_correlation, "vcr-similarity": run_vcr_similarity}
    return handlers[args.analysis](args)


def _analyze_overlap(args) -> int:
    from . import plots
    from .metrics.syn2nat import accuracy_matrix_from_csv, find_categories, overlap_matrix

    names, acc = accuracy_matrix_from_csv(args.matrix)
    o, undefined = overlap_matrix(acc, mode=args.mode)
    found = find_categories(o, threshold=args.threshold, k_max=args.k_max, n_init=args.n_init, seed=args.seed)
    labels = found["labels"]
    cats = {str(c + 1): [n for n, lab in zip(names, labels.tolist(), strict=True) if lab == c]
            for c in range(found["k"])}  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "overlap.csv", "w") as f:
        f.write("," + ",".join(names) + "\n")
        for n, row in zip(names, o, strict=True):
            f.write(n + "," + ",".join(f"{v:.6f}" for v in row) + "\n")
    (out / "categories.json").write_text(json.dumps(cats, indent=1) + "\n")
    summary = {"mode": args.mode, "undefined_terms": undefined, "k": found["k"], "stopped": found["stopped"],
               "threshold": args.threshold, "seed": args.seed, "n_init": args.n_init, "history": found["history"],
               "categories": cats}  # fmt: skip
    (out / "overlap.json").write_text(json.dumps(summary, indent=1) + "\n")
    plots.overlap_heatmap(o, names, labels, out / "overlap.png")
    rule = "exceeds" if found["stopped"] else "never exceeded"
    print(f"{len(names)} corruptions, k = {found['k']} (mean same-category correlation {rule} {args.threshold}):")
    for c, members in cats.items():
        print(f"  C{c}: {', '.join(members)}")
    if undefined:
        print(f"note: {undefined} overlap terms had a zero denominator and count as 0", file=sys.stderr)
    print(f"wrote {out / 'overlap.csv'}, categories.json, overlap.json, overlap.png")
    return 0


def _analyze_correlation(args) -> int:
    from .metrics.syn2nat import benchmark_correlations, read_named_table

    syn = read_named_table(args.synthetic)
    nat = read_named_table(args.natural)
    if args.benchmarks:
        benches = _load_benchmarks(args.benchmarks)
        source = args.benchmarks
    elif args.n and args.k:
        from ..families.syn2nat.selection import generate_benchmarks, load_categories

        if not args.categories:
            raise CorruptgenError("--n/--k need --categories (a categories.json from `corruptgen analyze overlap`)")
        benches = generate_benchmarks(load_categories(args.categories), args.n, args.k, args.count, seed=args.seed)
        source = f"Algorithm 1, n={args.n}, k={args.k}, {len(benches)} benchmarks, seed {args.seed}"
    else:
        first = next(iter(syn.values()))
        benches = [[c for c in first if c != "clean"]]
        source = "one benchmark of every synthetic column"
    syn_unit, nat_unit = args.synthetic_unit or args.unit, args.natural_unit or args.unit
    if not syn_unit or not nat_unit:
        raise CorruptgenError("Algorithm 2 needs the unit of the accuracy tables: --unit percent|fraction "
                              "(or --synthetic-unit / --natural-unit when they differ)")  # fmt: skip
    res = benchmark_correlations(syn, nat, benches, synthetic_unit=syn_unit, natural_unit=nat_unit)
    res["benchmarks_from"] = source
    print(f"Algorithm 2 over {len(res['models'])} models, {len(benches)} synthetic benchmark(s) ({source}):")
    for name, v in res["natural"].items():
        print(f"  {name:20s} mean r = {_f(v['mean_r'])}  mean p = {_f(v['mean_p'], 4)}")
    for note in res["notes"]:
        print(f"note: {note}", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


def _f(v, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _load_benchmarks(path: str) -> list[list[str]]:
    """A JSON list of benchmarks (lists of names), or the output of ``corruptgen select --json`` / ``--substitute``,
    or a text file with one comma-separated benchmark per line."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise CorruptgenError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except ValueError:
        return [[c.strip() for c in line.split(",") if c.strip()] for line in text.splitlines() if line.strip()]
    if isinstance(data, dict):
        data = data.get("benchmarks") or [b for g in (data.get("groups") or {}).values() for b in g]
    if not isinstance(data, list) or not all(isinstance(b, list) for b in data):
        raise CorruptgenError(f"{path}: expected a list of benchmarks (lists of corruption names)")
    return data


@register_commands("eval")
def add_commands(sub) -> dict:
    """Register ``eval``, ``report`` and ``analyze``; returns their handlers."""
    p = sub.add_parser("eval", help="evaluate models on a build (local directory or Hub dataset)")
    p.add_argument("source", help="build directory (<out>/<benchmark>) or Hub dataset hf:owner/name[@revision]")
    p.add_argument("--model", action="append", default=[], metavar="[NAME=]SPEC",
                   help="efficientnet_lite0 (default) | module:attribute | torchscript:<path> | torchvision:<name> | "
                   "timm:<name>; repeatable")  # fmt: skip
    p.add_argument("--subsets", default=None, help="comma-separated subsets (default: all; clean is added)")
    p.add_argument("--no-clean", dest="clean", action="store_false", help="do not add the clean reference subset")
    p.add_argument("--attacks", default=None, metavar="ATTACK[:KEY=VALUE],...",
                   help="white-box attacks of each model on the clean subset, reported as subsets: fgsm, fgsm_ll, "
                   "pgd, pgd_ll, mi_fgsm, cw_l2, e.g. pgd:eps=0.04,cw_l2 (eps on [0, 1] pixels); eccvw2020 or "
                   "iccvw2019: the thesis's white-box list")  # fmt: skip
    p.add_argument("--out", default=None, help="output directory (default results/<build name>)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    p.add_argument("--batch-size", type=positive_int, default=64)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes decoding images (default 0)")
    p.add_argument("--streaming", action="store_true", default=None, help="stream Hub shards instead of downloading")
    p.add_argument("--no-streaming", action="store_true", help="local builds: load through an Arrow cache instead")
    p.add_argument("--revision", default=None, help="Hub revision (branch, tag or commit)")
    p.add_argument("--limit", type=positive_int, default=None, help="only the first N samples of each subset")
    p.add_argument("--no-verify", dest="verify", action="store_false", help="skip the shard checksum check")
    p.add_argument("--no-predictions", dest="predictions", action="store_false", help="do not save predictions")
    p.add_argument("--no-report", dest="report", action="store_false", help="no report.md / plots")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--labels", choices=("check", "match", "ignore"), default="check",
                   help="check (default): refuse a model whose classes are not the build's label space; match: "
                   "they are the same classes (you say so); ignore: score without labels (label-free metrics "
                   "only)")  # fmt: skip
    p.add_argument("--class-map", default=None, metavar="FILE",
                   help="JSON {model class: build class} (indices or names) mapping predictions onto the build's "
                   "classes; unmapped predictions count as wrong")  # fmt: skip
    _metric_flags(p)

    p = sub.add_parser("report", help="tables, rankings and plots from results files (several models)")
    p.add_argument("results", nargs="+", help="results-*.json files or directories holding them")
    p.add_argument("--out", default="report", help="output directory (default report/)")
    p.add_argument(
        "--recompute",
        action="store_true",
        help="recompute every metric from the saved predictions; "
        "writes results-<model>.recomputed.json next to each results file",
    )
    _metric_flags(p)

    p = sub.add_parser("analyze", help="overlapping scores + categories, Algorithm 2 correlations (CSV tables), "
                       "visually similar VCR functions")  # fmt: skip
    asub = p.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS")
    q = asub.add_parser("overlap", help="overlap matrix (Laugros et al. Eq. 1) and K-means categories")
    q.add_argument("matrix", help="CSV: rows = model trained with a corruption (clean = standard), columns = test set")
    q.add_argument(
        "--mode",
        choices=("ratio", "accuracy"),
        default="ratio",
        help="R = acc/acc_clean as in the paper (default) or raw accuracy as the BMVC code",
    )
    q.add_argument("--threshold", type=float, default=0.5, help="stop at the first k with mean correlation above it")
    q.add_argument("--k-max", type=positive_int, default=None)
    q.add_argument("--n-init", type=positive_int, default=100, help="K-means restarts (default 100)")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--out", default="overlap", help="output directory (default overlap/)")
    q = asub.add_parser("correlation", help="Algorithm 2: mean Pearson r of residual robustness")
    q.add_argument("synthetic", help="CSV: models × (clean + synthetic corruptions), accuracies")
    q.add_argument("natural", help="CSV: models × ([clean +] natural-shift benchmarks), accuracies")
    q.add_argument("--unit", choices=UNITS, default=None, help="unit of the accuracies of both tables (required "
                   "unless both --synthetic-unit and --natural-unit are given; never guessed)")  # fmt: skip
    q.add_argument("--synthetic-unit", choices=UNITS, default=None, help="unit of the synthetic table")
    q.add_argument("--natural-unit", choices=UNITS, default=None, help="unit of the natural table")
    q.add_argument("--benchmarks", default=None, help="JSON/text list of synthetic benchmarks (default: all columns)")
    q.add_argument("--categories", default=None, help="with --n/--k: generate benchmarks with Algorithm 1")
    q.add_argument("--n", type=positive_int, default=None)
    q.add_argument("--k", type=positive_int, default=None)
    q.add_argument("--count", type=positive_int, default=1000)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--out", default=None, help="write the full result as JSON")  # fmt: skip
    add_vcr_similarity(asub)
    return {"eval": _cmd_eval, "report": _cmd_report, "analyze": _cmd_analyze}

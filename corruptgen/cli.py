"""Command line: ``corruptgen build|list|select|verify`` plus the commands of the sub-packages (``vif``,
``kernels``, ``eval``, ``report``, ``analyze``, ``card``, ``push``). User errors print one line and exit with code 2."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from .commands import command_groups, positive_int, register_commands
from .errors import CorruptgenError
from .io.decode import DEFAULT_MAX_BYTES
from .wording import counted


def _add_build(sub) -> None:
    from .io.sources import spec_forms

    p = sub.add_parser("build", help="render a benchmark into WebDataset shards")
    p.add_argument("benchmark", help="benchmark family, e.g. syn2nat (see `corruptgen list`)")
    p.add_argument("--source", default="samples", help=f"{spec_forms()} (default samples)")
    p.add_argument(
        "--out",
        default="corruptgen-out",
        help="output root (a path or an fsspec URL: s3://, gs://, hf://, ...); the build goes to <out>/<benchmark>/",
    )
    p.add_argument("--subsets", default=None, help="comma-separated subset names, or 'all' (default: the benchmark's)")
    p.add_argument("--limit", type=positive_int, default=None, help="use only the first N source images")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (output does not depend on it)")
    p.add_argument("--seed", type=int, default=0, help="global seed (default 0)")
    p.add_argument(
        "--format",
        dest="image_format",
        choices=("jpg", "png", "webp", "npy"),
        default=None,
        help="image format of the shards (default: the family's, jpg for most; npy: float32 arrays, adversarial)",
    )
    p.add_argument("--quality", type=int, default=85, help="JPEG/WebP quality (default 85)")
    p.add_argument("--shard-size", type=positive_int, default=None,
                   help="source images per shard (default: inputs/8 in 16..1000, docs/building.md)")  # fmt: skip
    p.add_argument("--split", default="test", help="split name used in shard file names (default test)")
    p.add_argument("--preprocess", default=None, help="syn2nat | imagenet | resize224 | none (default: the family's)")
    p.add_argument("--image-column", default=None, help="hf: sources: the image column")
    p.add_argument("--label-column", default=None, help="hf: sources: the label column")
    p.add_argument("--folder-labels", action="store_true",
                   help="imagefolder:/filelist: label class folders by their sorted position, whatever their names "
                   "(default: ImageNet wnid folders get their ImageNet index; also --labels folders)")  # fmt: skip
    p.add_argument("--max-pixels", type=positive_int, default=100_000_000, help="decompression-bomb guard")
    p.add_argument("--max-bytes", type=positive_int, default=DEFAULT_MAX_BYTES,
                   help=f"larger input files are skipped (default {DEFAULT_MAX_BYTES}, 256 MiB)")  # fmt: skip
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] for corruptions with a batched torch form")
    p.add_argument("--batch-size", type=positive_int, default=64, help="batch size of batched corruptions")
    p.add_argument(
        "--io-threads",
        type=int,
        default=None,
        help="threads decoding ahead / encoding behind each worker (default 0 on cpu, 8 with cuda)",
    )
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="run chunk tasks here or on Ray")
    p.add_argument("--address", default=None, help="ray: cluster address ('auto', ray://host:port); default local")
    p.add_argument("--task-cpus", type=float, default=1, help="ray: CPUs per chunk task")
    p.add_argument("--task-gpus", type=float, default=None, help="ray: GPUs per chunk task (default 1 with cuda)")
    p.add_argument("--no-clean", dest="clean", action="store_false", help="do not write the clean reference subset")
    p.add_argument("--strict", action="store_true", help="exit non-zero if any input is skipped")
    p.add_argument("--overwrite", action="store_true", help="replace a different build (only its recorded shards)")
    p.add_argument("--wait-lock", type=float, default=0, metavar="SECONDS", help="wait for another build's lock")
    p.add_argument("--force-unlock", action="store_true", help="remote --out: remove a lock left by a killed build")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--no-card", dest="card", action="store_false",
                   help="no dataset card (README.md, images/); the datasets configs alone go to .huggingface.yaml, "
                   "so load_dataset(DIR, name=<subset>) still loads one subset")  # fmt: skip
    p.add_argument("--size", type=positive_int, default=None, help="output crop size (preprocessing scaled to it)")


def add_family_options(build_parser: argparse.ArgumentParser, names: Sequence[str] | None = None) -> list[str]:
    """Add the own options (``Benchmark.options``) of the families ``names`` (default: every registered one) as
    flags; returns their keyword names."""
    from .family.benchmark import get_benchmark, list_benchmarks

    declared: dict[str, tuple[object, list[str]]] = {}
    for name in list_benchmarks() if names is None else names:
        for option in get_benchmark(name).options:
            declared.setdefault(option.name, (option, []))[1].append(name)
    group = build_parser.add_argument_group("family options (each benchmark family accepts its own)")
    for option, families in declared.values():
        kwargs: dict = {"default": None, "help": f"{', '.join(families)}: {option.help}"}
        if option.kind == "flag":
            kwargs["action"] = "store_true"
        elif option.kind == "int":
            kwargs["type"] = int
        group.add_argument(option.flag, dest=option.name, **kwargs)
    return list(declared)


def _cmd_build(args) -> int:
    from .api import build
    from .engine.options import RayOptions
    from .errors import NoSamplesError

    if getattr(args, "labels", None) == "folders":  # the spelling of --folder-labels a user may reach for first
        args.labels, args.folder_labels = None, True
    try:
        result = build(
            args.benchmark, source=args.source, out=args.out, subsets=args.subsets, clean=args.clean, limit=args.limit,
            workers=args.workers, seed=args.seed, image_format=args.image_format, quality=args.quality,
            shard_size=args.shard_size, split=args.split, preprocess=args.preprocess, image_column=args.image_column,
            label_column=args.label_column, folder_labels=args.folder_labels, max_pixels=args.max_pixels,
            max_bytes=args.max_bytes, overwrite=args.overwrite, progress=args.progress, device=args.device,
            batch_size=args.batch_size, io_threads=args.io_threads, size=args.size, engine=args.engine, card=args.card,
            ray=RayOptions(address=args.address, num_cpus=args.task_cpus, num_gpus=args.task_gpus),
            wait_lock=args.wait_lock, force_unlock=args.force_unlock,
            **{k: getattr(args, k) for k in args.family_options if getattr(args, k) is not None},
        )  # fmt: skip
    except NoSamplesError as e:  # a user error (exit 2), or what --strict reports (exit 1)
        print(f"corruptgen: error: {e}", file=sys.stderr)
        return 1 if args.strict else 2
    print(result.summary())
    counts = result.manifest["counts"]
    if args.strict and (counts["skipped_inputs"] or counts["failed_samples"]):
        print("corruptgen: error: --strict and some inputs were skipped", file=sys.stderr)
        return 1
    return 0


def _cmd_list(args) -> int:
    from .corruptions import get
    from .family.benchmark import get_benchmark, list_benchmarks

    if args.benchmark is None:
        for name in list_benchmarks():
            b = get_benchmark(name)
            print(f"{name:14s} {b.title}: {counted(len(b.subsets) - 1, 'subset')}, {len(b.default_subsets)} by default")
        return 0
    bench = get_benchmark(args.benchmark)
    names = bench.category_names
    rows = []
    for name, subset in bench.subsets.items():
        if subset.corruption is None or name == "clean":
            continue
        c = get(subset.corruption)
        category = subset.category if subset.category is not None else c.category
        rows.append({
            "name": name, "corruption": c.qualified_name, "severity": subset.severity, "category": category,
            "category_name": names.get(category), "default": name in bench.default_subsets,
            "reference": c.reference, "params": dict(c.params), "options": dict(subset.options),
            "fidelity": c.fidelity,
        })  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    print(
        f"{bench.title} — {counted(len(rows), 'subset')}; * = in the default selection ({len(bench.default_subsets)})"
    )
    print(f"{'':2}{'name':24} {'category':26} parameters")
    for r in rows:
        cat = f"{r['category']} {r['category_name'] or ''}".strip() if r["category"] else "unassigned"
        shown = r["options"] or r["params"]
        params = ", ".join(f"{k}={v}" for k, v in shown.items())
        print(f"{'*' if r['default'] else ' '} {r['name']:24} {cat:26} {params}")
    return 0


def _cmd_select(args) -> int:
    from .families.syn2nat.benchmark import syn2nat_categories
    from .families.syn2nat.selection import (
        balance_std,
        count_possible,
        generate_benchmarks,
        load_categories,
        substitution_study,
    )

    categories = load_categories(args.categories) if args.categories else syn2nat_categories()
    possible = count_possible(categories, args.n, args.k)
    benches = generate_benchmarks(categories, args.n, args.k, args.count, seed=args.seed)
    note = ""
    if len(benches) < args.count:
        note = f"only {possible} distinct benchmarks exist for n={args.n}, k={args.k}; returning all of them"
        print(f"corruptgen: note: {note}", file=sys.stderr)
    if args.substitute:
        groups = substitution_study(benches, categories, seed=args.seed, max_substitutions=args.max_substitutions)
        payload = {"n": args.n, "k": args.k, "seed": args.seed,
                   "groups": {f"{std:.1f}": [list(b) for b in group] for std, group in groups.items()}}  # fmt: skip
        text = json.dumps(payload, indent=1)
        summary = ", ".join(f"std {std:.1f}: {len(g)}" for std, g in groups.items())
        print(f"substitution study: {summary}", file=sys.stderr)
    elif args.json or args.out:
        text = json.dumps({"n": args.n, "k": args.k, "seed": args.seed, "possible": possible,
                           "benchmarks": [list(b) for b in benches],
                           "std": [balance_std(b, categories) for b in benches]}, indent=1)  # fmt: skip
    else:
        text = "\n".join(",".join(b) for b in benches)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        print(f"wrote {counted(len(benches), 'benchmark')} to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


def _cmd_verify(args) -> int:
    from .engine.manifest import verify

    report = verify(args.directory, source=args.source_from or args.source)
    for rel in report.missing:
        print(f"missing: {rel}")
    for line in report.stale or ():
        print(f"source changed: {line}")
    for rel in report.mismatched:
        print(f"checksum mismatch: {rel}")
    for rel in report.unexpected:
        print(f"not in manifest: {rel}")
    for line in report.ids:
        print(f"id mismatch: {line}")
    print(report.summary(strict=args.strict))
    return 0 if report.ok and not (args.strict and report.unexpected) else 1


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (no usage block), exit 2, like every other user error."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("corruptgen").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"corruptgen: error: {where}{message} (see `{self.prog} --help`)\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The ``corruptgen`` parser with every registered command group, and ``{command: handler}``."""
    parser = _Parser(prog="corruptgen", description=__doc__)
    parser.add_argument("--version", action="version", version=f"corruptgen {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    handlers = {}
    for _name, add_commands in command_groups():
        handlers.update(add_commands(sub))
    _no_progress_everywhere(parser)
    return parser, handlers


def _no_progress_everywhere(parser: argparse.ArgumentParser) -> None:
    """Give every (sub-)command ``--no-progress``, so a script can pass it to any: those without a progress bar
    accept it and show nothing anyway."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                if "--no-progress" not in command._option_string_actions:
                    command.add_argument("--no-progress", dest="progress", action="store_false",
                                         help="accepted for scripts (this command shows no progress bar)")  # fmt: skip
                _no_progress_everywhere(command)


@register_commands("core")
def _core_commands(sub) -> dict:
    """``build``, ``list``, ``select`` and ``verify``."""
    _add_build(sub)

    p = sub.add_parser("list", help="list benchmarks, or a benchmark's corruptions, categories and parameters")
    p.add_argument("benchmark", nargs="?", default=None)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("select", help="generate balanced corruption benchmarks (Laugros et al. Algorithm 1)")
    p.add_argument("--n", type=positive_int, required=True, help="number of categories represented")
    p.add_argument("--k", type=positive_int, required=True, help="representatives per category")
    p.add_argument("--count", type=positive_int, default=1000, help="number of distinct benchmarks (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--categories", default=None, help="JSON category file (default: the six Syn2Nat categories)")
    p.add_argument("--substitute", action="store_true", help="run the substitution study and group by std (§5.2)")
    p.add_argument("--max-substitutions", type=positive_int, default=None)
    p.add_argument("--json", action="store_true", help="print JSON instead of one benchmark per line")
    p.add_argument("--out", default=None, help="write JSON to this file")

    p = sub.add_parser("verify", help="re-hash every shard of a build against its manifest")
    p.add_argument("directory")
    p.add_argument("--strict", action="store_true", help="exit 1 also for tar files the manifest does not list")
    p.add_argument("--source", action="store_true",
                   help="also read the source again: exit 1 if a shard no longer matches its inputs")  # fmt: skip
    p.add_argument("--source-from", metavar="SPEC", default=None,
                   help="--source, reading SPEC (where the source is now) instead of the recorded source")  # fmt: skip
    return {"build": _cmd_build, "list": _cmd_list, "select": _cmd_select, "verify": _cmd_verify}


def _version() -> str:
    from ._version import __version__

    return __version__


def _build_subparser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["build"]


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, dict]:
    """Parse a command line. ``build`` imports only the family it names for that family's options (a build of one
    family starts ~2 s sooner); ``--help``, a family not found that way, or a flag the family does not declare
    parse again with every family's options, so the message names the families that take the flag."""
    argv = list(argv)
    parser, commands = build_parser()
    if next((a for a in argv if not a.startswith("-")), None) != "build":  # families load only when building
        return parser.parse_args(argv), commands
    if not {"-h", "--help"} & set(argv):
        from .errors import UnknownNameError
        from .family.benchmark import FAMILIES

        first, _ = parser.parse_known_args(argv)
        try:
            family = FAMILIES.canonical(first.benchmark)
        except UnknownNameError:
            family = None
        if family is not None:
            one = _build_subparser(parser)
            one.set_defaults(family_options=add_family_options(one, [family]))
            args, rest = parser.parse_known_args(argv)
            if not rest:
                return args, commands
            parser, commands = build_parser()
    every = _build_subparser(parser)
    every.set_defaults(family_options=add_family_options(every))
    return parser.parse_args(argv), commands


def main(argv: Sequence[str] | None = None) -> int:
    args, commands = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return commands[args.command](args)
    except CorruptgenError as e:
        print(f"corruptgen: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("corruptgen: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `corruptgen list syn2nat | head`
        sys.stderr.close()
        return 0
    except OSError as e:  # e.g. a read-only output directory or a full disk: exit 1 is for --strict and verify
        print(f"corruptgen: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

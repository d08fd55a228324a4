"""``corruptgen card DIR`` and ``corruptgen push DIR user/name`` (wired by :mod:`corruptgen.cli`)."""

from __future__ import annotations

import argparse
import sys

from ..commands import register_commands
from ..wording import counted


def _licence_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "card", "options a card was written with are kept by later builds and `corruptgen card` runs until given again"
    )
    g.add_argument("--license", default=None, help="licence of the source images as a Hub id (e.g. cc-by-4.0, other)")
    g.add_argument("--license-name", default=None, help="with --license other: a short licence name")
    g.add_argument("--license-link", default=None, help="with --license other: a URL of the licence text")
    g.add_argument("--pretty-name", default=None, help="card title (default: '<benchmark title> (corruptgen render)')")
    g.add_argument("--scan", type=int, default=None, metavar="N",
                   help="builds made before corruptgen recorded shard facts: infer the declared features from the "
                   "first N samples per subset (default: all)")  # fmt: skip


def _card_options(args) -> dict:
    return {"license": args.license, "license_name": args.license_name, "license_link": args.license_link,
            "pretty_name": args.pretty_name, "scan_limit": args.scan}  # fmt: skip


@register_commands("hub")
def add_commands(sub) -> dict:
    p = sub.add_parser("card", help="(re)write README.md: Hub YAML metadata + a human-readable dataset card")
    p.add_argument("directory", help="a build directory, e.g. ./corruptgen-out/syn2nat")
    p.add_argument("--repo-id", default=None, help="the Hub repository the card's loading examples name")
    p.add_argument("--no-images", dest="images", action="store_false", default=None,
                   help="no sample grid / Δv histogram PNGs")  # fmt: skip
    p.add_argument("--print", dest="print_card", action="store_true", help="print the card instead of writing it")
    _licence_args(p)

    p = sub.add_parser("push", help="upload a build directory to a Hugging Face Hub dataset repository")
    p.add_argument("directory", help="a build directory, e.g. ./corruptgen-out/syn2nat")
    p.add_argument("repo_id", help="user/name or org/name (created if needed)")
    p.add_argument("--private", action="store_true", default=None, help="create the repository private")
    p.add_argument("--revision", default="main", help="branch to commit to (created if missing; default main)")
    p.add_argument("--dry-run", action="store_true", help="list the files and their sizes; write and send nothing")
    p.add_argument("--keep-card", action="store_true", help="upload the existing README.md instead of rewriting it")
    p.add_argument("--verify", action="store_true", help="re-hash every shard against the manifest first")
    p.add_argument("--no-gate", dest="gate", action="store_false",
                   help="do not turn on access gating for ImageNet-derived data")  # fmt: skip
    _licence_args(p)
    return {"card": _cmd_card, "push": _cmd_push}


def _cmd_card(args) -> int:
    from .card import render_card, save_card

    card = render_card(args.directory, repo_id=args.repo_id, images=args.images, **_card_options(args))
    if card.refused:
        print(f"corruptgen: note: {card.refused}", file=sys.stderr)
    if args.print_card:
        sys.stdout.write(card.text)
        return 0
    save_card(args.directory, card)
    print(f"wrote {', '.join(card.files)} in {args.directory}: {len(card.configs)} configs with declared features")
    return 0


def _cmd_push(args) -> int:
    from .card_body import human_bytes
    from .push import push

    result = push(args.directory, args.repo_id, private=args.private, revision=args.revision, dry_run=args.dry_run,
                  keep_card=args.keep_card, verify=args.verify, gate=args.gate, **_card_options(args))  # fmt: skip
    plan = result.plan
    if plan.card is not None and plan.card.refused:
        print(f"corruptgen: note: {plan.card.refused}", file=sys.stderr)
    if args.dry_run:
        print(plan.describe())
        return 0
    for note in result.notes:
        print(f"corruptgen: note: {note}", file=sys.stderr)
    print(f"uploaded {counted(len(plan.files), 'file')} ({human_bytes(plan.nbytes)}) to {plan.url} with {result.method}"
          + (f" ({result.commit_url})" if result.commit_url else ""))  # fmt: skip
    return 0

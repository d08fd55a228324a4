"""The ``corruptgen`` sub-commands as a registry, and the argument types they share.

A module named ``cli.py`` anywhere in the package (``corruptgen/eval/cli.py``, a family folder's ``cli.py``) adds its
sub-commands by registering a function that takes argparse's sub-parsers and returns ``{command: handler}``:

    >>> @register_commands("example")                       # doctest: +SKIP
    ... def add_commands(sub):
    ...     sub.add_parser("hello", help="say hello")
    ...     return {"hello": lambda args: print("hello") or 0}

:func:`command_groups` imports every such module on first use, so adding a command never means editing a list.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path

from .registry import Registry

#: group name -> ``add_commands(subparsers) -> {command name: handler(args) -> exit code}``
COMMANDS: Registry[Callable[[argparse._SubParsersAction], dict]] = Registry("command group")
register_commands = COMMANDS.register
_ROOT = Path(__file__).parent


def command_groups() -> list[tuple[str, Callable]]:
    """Every registered command group, after importing each ``cli.py`` module below the package (sorted by path)."""
    for path in sorted(_ROOT.rglob("cli.py")):
        rel = path.relative_to(_ROOT).with_suffix("").parts
        if len(rel) > 1 and not any(part.startswith(("_", ".")) for part in rel):
            importlib.import_module(".".join((_ROOT.name, *rel)))
    return list(COMMANDS.items())


def positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value

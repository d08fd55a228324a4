"""Small helpers for the words of one-line messages."""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 shard``, ``2 shards``, ``0 shards`` (``plural`` for an irregular noun: ``counted(2, "class", "classes")``).

    >>> counted(1, "input"), counted(3, "input"), counted(1, "class", "classes"), counted(2, "class", "classes")
    ('1 input', '3 inputs', '1 class', '2 classes')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def some(names: Sequence[str], most: int = 5) -> str:
    """The first ``most`` of ``names`` and how many more: ``a, b, c and 4 more``."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")

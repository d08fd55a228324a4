"""Card body templates: the family template ``cards/<benchmark>.md`` (or a built-in fallback) and filling it."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from ..errors import CorruptgenError

#: Where the family templates live (package data); a generic body is built in as a fallback.
TEMPLATE_DIR = Path(str(resources.files("corruptgen.cards")))

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_EPRINT = re.compile(r"eprint\s*=\s*\{\s*(\d{4}\.\d{4,5})\s*\}")


def template_path(benchmark: str) -> Path | None:
    """``cards/<benchmark>.md`` (``_`` and ``-`` interchangeable), else ``cards/generic.md``, else None."""
    for name in (benchmark, benchmark.replace("_", "-"), benchmark.replace("-", "_"), "generic"):
        p = TEMPLATE_DIR / f"{name}.md"
        if p.is_file():
            return p
    return None


def arxiv_ids(benchmark: str) -> list[str]:
    """The arXiv ids (``eprint`` of the BibTeX) of the papers the family template cites, in order."""
    path = template_path(benchmark)
    return list(dict.fromkeys(_EPRINT.findall(path.read_text(encoding="utf-8")))) if path else []


_FALLBACK = """# {{pretty_name}}

{{summary}}

## Subsets

{{subsets}}

## Sample images

{{figures}}

## How it was generated

{{generation}}

## Loading

{{loading}}

## Evaluating with corruptgen

{{evaluation}}

## Licence

{{license}}
"""


def fill_template(template: str, values: dict[str, str]) -> str:
    """Replace every ``{{ name }}``; an unknown name is an error (templates and code must agree)."""

    def sub(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise CorruptgenError(f"card template uses an unknown placeholder {{{{{key}}}}}")
        return values[key]

    return _PLACEHOLDER.sub(sub, template)

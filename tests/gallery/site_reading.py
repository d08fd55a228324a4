"""Readers of what a gallery shows and of a build's stored images (imported by the gallery tests; a module of its own
name, so it never collides with another folder's conftest)."""

from __future__ import annotations

import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path

from corruptgen.engine.reader import Build


def stored_images(build: str | Path) -> dict[tuple[str, str], bytes]:
    """``{(subset, key): image bytes}`` of every sample of a build, read from its shards (frames: the last one)."""
    b = Build.open(build)
    out = {}
    for subset in b.subset_names():
        for key, fields in b.iter_samples(subset, lambda f: f.rsplit(".", 1)[-1] in ("jpg", "png", "webp")):
            images = sorted(f for f, data in fields.items() if data is not None)
            if images:
                out[(subset, key)] = fields[images[-1]]
    return out


def site_record(site: Path) -> dict:
    return json.loads((site / "gallery.json").read_text())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text of its ``<script>`` elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parse_page(site: Path) -> Tags:
    tags = Tags()
    tags.feed((site / "index.html").read_text())
    return tags


def thumbs(tags: Tags) -> list[dict[str, str | None]]:
    return [a for tag, a in tags.tags if tag == "a" and "thumb" in (a.get("class") or "").split()]


def cell_accuracies(tags: Tags) -> dict[str, list[str | None]]:
    """``{a cell's data-subsets: [data-top1 of each model shown in it]}`` (cells of several rows share clean)."""
    out: dict[str, list[str | None]] = {}
    cell = None
    for tag, a in tags.tags:
        if tag == "td":
            cell = a.get("data-subsets")
        elif tag == "div" and a.get("class") == "acc" and cell is not None:
            out.setdefault(cell, []).append(a.get("data-top1"))
    return out

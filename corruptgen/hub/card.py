"""Dataset cards for build directories: YAML metadata the Hub and `datasets` read, and a human-readable body.

Layout and metadata follow the Hub's dataset-card and manual-configuration documentation: one config per subset
with ``data_files`` pointing at ``data/<subset>/<split>-*.tar``, declared ``dataset_info`` features per config
(inferred from the samples, see :mod:`corruptgen.hub.features`; ``cls`` as a ``ClassLabel`` with the class names), the
licence of the source (the gated ImageNet terms pattern for ImageNet-derived data), paper links (``arxiv:`` tags), and
a body rendered from the family template in ``cards/<benchmark>.md``. ``corruptgen build`` writes the card at the end
of every build (:func:`refresh_card`).

This module holds the entry points (render, write, read back the marker); the parts live in
:mod:`~corruptgen.hub.card_yaml` (licence, scan, YAML metadata), :mod:`~corruptgen.hub.card_body` (body sections) and
:mod:`~corruptgen.hub.card_template` (templates). Their public names stay importable from here.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..io.storage import is_url, local_path, location
from ..manifest import MANIFEST
from ..reader import Build
from .card_body import ASSET_DIR as ASSET_DIR
from .card_body import (
    DELTA_V,
    GRID,
    _evaluation,
    _figures,
    _generation,
    _licence_section,
    _loading,
    _source_text,
    _subsets_table,
)
from .card_template import _FALLBACK, arxiv_ids, fill_template, template_path
from .card_template import _PLACEHOLDER as _PLACEHOLDER
from .card_template import TEMPLATE_DIR as TEMPLATE_DIR
from .card_yaml import DELTA_V_KEYS as DELTA_V_KEYS
from .card_yaml import IMAGENET_GATED_PROMPT as IMAGENET_GATED_PROMPT
from .card_yaml import IMAGENET_TERMS_URL as IMAGENET_TERMS_URL
from .card_yaml import SKIMAGE_DATA_URL as SKIMAGE_DATA_URL
from .card_yaml import Licence as Licence
from .card_yaml import ScanResult as ScanResult
from .card_yaml import build_metadata, licence_for, scan_build
from .card_yaml import size_category as size_category
from .card_yaml import source_kind as source_kind
from .features import SubsetSchema
from .figures import delta_v_coverage as delta_v_coverage
from .figures import delta_v_histogram, sample_grid

README = "README.md"
MARKER = "corruptgen-card"


@dataclass
class Card:
    """A rendered card: README text, its YAML metadata, and the asset files it references (``{relpath: bytes}``)."""

    text: str
    metadata: dict[str, Any]
    assets: dict[str, bytes] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    schemas: dict[str, SubsetSchema] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        """Files the card adds to the build directory (relative paths)."""
        return [README, *sorted(self.assets)]


def render_card(
    directory: str | Path,
    *,
    repo_id: str | None = None,
    license: str | None = None,
    license_name: str | None = None,
    license_link: str | None = None,
    pretty_name: str | None = None,
    scan_limit: int | None = None,
    images: bool = True,
    progress: bool = False,
) -> Card:
    """Render the card of a build directory without writing anything.

    ``scan_limit`` caps the samples read per subset to infer the declared features (default: all of them, which is
    exact); ``license`` states the source licence (a Hub licence id such as ``cc-by-4.0``).
    """
    store = CardStore(directory)
    build = Build.open(store.where)
    if not build.manifest.get("complete"):
        raise CorruptgenError(
            f"{build.location}: the build is incomplete; re-run the same `corruptgen build` to finish it"
        )
    scan = scan_build(build, limit=scan_limit, progress=progress)
    licence = licence_for(build.manifest, license=license, license_name=license_name, license_link=license_link)
    papers = arxiv_ids(build.benchmark)
    metadata = build_metadata(build, scan, licence, pretty_name=pretty_name, arxiv=papers)
    assets: dict[str, bytes] = {}
    if images:
        grid = sample_grid(build)
        if grid:
            assets[GRID] = grid
        if scan.delta_v:
            assets[DELTA_V] = delta_v_histogram(scan.delta_v)
    counts = build.manifest.get("counts", {})
    total = sum(build.samples(n) for n in build.configs())
    summary = (
        f"{total:,} images in {len(build.configs())} subsets, rendered by "
        f"corruptgen from {counts.get('inputs', '?'):,} source images of "
        f"{_source_text(build.manifest.get('source') or {})} as WebDataset shards (`data/<subset>/*.tar`)."
    )
    if papers:
        summary += " Paper: " + ", ".join(f"[arXiv:{i}](https://arxiv.org/abs/{i})" for i in papers) + "."
    values = {
        "pretty_name": metadata.get("pretty_name", build.benchmark),
        "benchmark": build.benchmark,
        "repo_id": repo_id or "<user>/<repo>",
        "summary": summary,
        "subsets": _subsets_table(build),
        "figures": _figures(build, scan, assets),
        "generation": _generation(build, scan),
        "loading": _loading(build, repo_id, scan.schemas),
        "evaluation": _evaluation(build, repo_id),
        "license": _licence_section(build, licence),
        "split": build.split,
    }
    path = template_path(build.benchmark)
    body = fill_template(path.read_text(encoding="utf-8") if path else _FALLBACK, values)
    manifest_sha256 = hashlib.sha256(store.read(MANIFEST) or b"").hexdigest()
    marker = f"<!-- {MARKER}: plan_id={build.manifest.get('plan_id')} manifest_sha256={manifest_sha256} -->"
    text = f"---\n{_yaml(metadata)}---\n\n{marker}\n\n{body.strip()}\n"
    return Card(text=text, metadata=metadata, assets=assets, configs=build.configs(), schemas=scan.schemas)


def _yaml(metadata: dict) -> str:
    """Block-style YAML as huggingface_hub writes cards (libyaml's emitter when present: same text, faster)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(metadata, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)


def write_card(directory: str | Path, **options: Any) -> Card:
    """Render and write ``README.md`` and the figures (``images/``) of a build directory; see :func:`render_card`."""
    card = render_card(directory, **options)
    save_card(directory, card)
    return card


def refresh_card(directory: str | Path, *, progress: bool = False) -> Card | None:
    """Write the card of a finished build unless the README already is the card of this very manifest (a card
    written with options, e.g. ``corruptgen card --license``, is kept) or the build has no sample at all (every input
    skipped: there is nothing to describe); returns the card written, or None."""
    store = CardStore(directory)
    if not Build.open(store.where).configs():
        return None
    current = card_marker(directory)
    if current is not None and current["manifest_sha256"] == hashlib.sha256(store.read(MANIFEST) or b"").hexdigest():
        return None
    return write_card(directory, progress=progress)


class CardStore:
    """Where a card is read and written: a local build directory or the fsspec URL of a remote one."""

    def __init__(self, directory: str | Path) -> None:
        self.local = local_path(directory) if is_url(str(directory)) else Path(directory)
        self.remote = None if self.local is not None else location(str(directory))
        self.where = str(self.local) if self.local is not None else self.remote.url

    def read(self, rel: str) -> bytes | None:
        if self.remote is not None:
            return self.remote.read_bytes(rel)
        path = self.local / rel
        return path.read_bytes() if path.is_file() else None

    def write(self, rel: str, data: bytes) -> None:
        if self.remote is not None:
            self.remote.put_bytes(rel, data)
            return
        path = self.local / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def remove(self, rel: str) -> None:
        if self.remote is not None:
            if self.remote.exists(rel):
                self.remote.fs.rm(self.remote.path(rel))
        else:
            (self.local / rel).unlink(missing_ok=True)


def save_card(directory: str | Path, card: Card) -> None:
    """Write a rendered card into a build directory (figures it no longer has are removed); the README goes last."""
    store = CardStore(directory)
    for rel in (GRID, DELTA_V):
        if rel not in card.assets:
            store.remove(rel)
    for rel, data in card.assets.items():
        store.write(rel, data)
    store.write(README, card.text.encode("utf-8"))


def card_marker(directory: str | Path) -> dict[str, str] | None:
    """The ``plan_id`` / ``manifest_sha256`` a corruptgen-written README records, or None."""
    raw = CardStore(directory).read(README)
    if raw is None:
        return None
    match = re.search(rf"<!-- {MARKER}: plan_id=(\S+) manifest_sha256=(\S+) -->", raw.decode("utf-8", "replace"))
    return {"plan_id": match.group(1), "manifest_sha256": match.group(2)} if match else None

"""Dataset cards for build directories: YAML metadata the Hub and `datasets` read, and a human-readable body.

Layout and metadata follow the Hub's dataset-card and manual-configuration documentation: one config per subset
with ``data_files`` pointing at ``data/<subset>/<split>-*.tar``, declared ``dataset_info`` features per config
(from the shard facts the build recorded, see :mod:`corruptgen.hub.card_scan`; ``cls`` as a ``ClassLabel`` with the
class names), the identity of each config's shards (so `datasets`' cache never serves stale rows), the licence of the
source (the gated ImageNet terms pattern for ImageNet-derived data), paper links (``arxiv:`` tags), and a body rendered
from the family template in ``cards/<benchmark>.md``: the title and a summary table first. ``corruptgen build`` writes
the card at the end of every build (:func:`refresh_card`); a build without a card gets the `datasets` part alone
(:func:`write_configs_yaml`).

This module holds the entry points (render, write, read back the marker); the parts live in
:mod:`~corruptgen.hub.card_scan` (features, classes), :mod:`~corruptgen.hub.card_yaml` (licence, YAML metadata),
:mod:`~corruptgen.hub.card_body` (body sections) and :mod:`~corruptgen.hub.card_template` (templates). Their public
names stay importable from here.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.manifest import MANIFEST
from ..engine.reader import Build
from ..errors import CorruptgenError
from ..io.atomic import write_atomic
from ..io.regular import is_regular, open_regular
from ..io.storage import is_url, local_path, location
from .card_body import ASSET_DIR as ASSET_DIR
from .card_body import (
    DELTA_V,
    GRID,
    _evaluation,
    _figures,
    _generation,
    _licence_section,
    _loading,
    _subsets_table,
    _summary,
)
from .card_scan import DELTA_V_KEYS as DELTA_V_KEYS
from .card_scan import ScanResult as ScanResult
from .card_scan import delta_v_values, has_delta_v, scan_build
from .card_scan import source_kind as source_kind
from .card_template import _FALLBACK, arxiv_ids, fill_template, template_path
from .card_template import _PLACEHOLDER as _PLACEHOLDER
from .card_template import TEMPLATE_DIR as TEMPLATE_DIR
from .card_yaml import IMAGENET_GATED_PROMPT as IMAGENET_GATED_PROMPT
from .card_yaml import IMAGENET_TERMS_URL as IMAGENET_TERMS_URL
from .card_yaml import SKIMAGE_DATA_URL as SKIMAGE_DATA_URL
from .card_yaml import Licence as Licence
from .card_yaml import build_metadata, dump_yaml, licence_for
from .card_yaml import size_category as size_category
from .features import SubsetSchema
from .figures import delta_v_coverage as delta_v_coverage
from .figures import delta_v_histogram, sample_grid

README = "README.md"
#: the `datasets` configs of a build without a card (datasets reads this file as the card's YAML)
CONFIGS_YAML = ".huggingface.yaml"
MARKER = "corruptgen-card"
#: ``corruptgen card`` options a card remembers (in its marker) and later builds reuse
OPTIONS = ("repo_id", "license", "license_name", "license_link", "pretty_name", "scan_limit", "images")


@dataclass
class Card:
    """A rendered card: README text, its YAML metadata, and the asset files it references (``{relpath: bytes}``)."""

    text: str
    metadata: dict[str, Any]
    assets: dict[str, bytes] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    schemas: dict[str, SubsetSchema] = field(default_factory=dict)
    refused: str | None = None  # samples the card's reading left out (Build.refused_note)

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
    images: bool | None = None,
) -> Card:
    """Render the card of a build directory without writing anything.

    ``license`` states the source licence (a Hub licence id such as ``cc-by-4.0``); ``images=False`` draws no
    figures; ``scan_limit`` caps the samples read per subset of a build made before shard facts were recorded (its
    features are inferred from the samples). An option not given keeps the value the current card was written with
    (e.g. by ``corruptgen card --license``), so what the publisher set survives later builds.
    """
    store = CardStore(directory)
    build = Build.open(store.where)
    if not build.manifest.get("complete"):
        raise CorruptgenError(
            f"{build.location}: the build is incomplete; re-run the same `corruptgen build` to finish it"
        )
    given = {"repo_id": repo_id, "license": license, "license_name": license_name, "license_link": license_link,
             "pretty_name": pretty_name, "scan_limit": scan_limit, "images": images}  # fmt: skip
    options = {**(card_marker(directory) or {}).get("options", {}), **{k: v for k, v in given.items() if v is not None}}
    scan = scan_build(build, limit=options.get("scan_limit"))
    licence = licence_for(build.manifest, license=options.get("license"), license_name=options.get("license_name"),
                          license_link=options.get("license_link"))  # fmt: skip
    papers = arxiv_ids(build.benchmark)
    metadata = build_metadata(build, scan, licence, pretty_name=options.get("pretty_name"), arxiv=papers)
    assets: dict[str, bytes] = {}
    if options.get("images", True):
        grid = sample_grid(build)
        if grid:
            assets[GRID] = grid
        if any(has_delta_v(schema) for schema in scan.schemas.values()):
            scan.delta_v = delta_v_values(build, scan)
        if scan.delta_v:
            assets[DELTA_V] = delta_v_histogram(scan.delta_v)
    repo = options.get("repo_id")
    values = {
        "pretty_name": metadata["pretty_name"],
        "benchmark": build.benchmark,
        "repo_id": repo or "<user>/<repo>",
        "summary": _summary(build, metadata, licence, papers, repo),
        "subsets": _subsets_table(build),
        "figures": _figures(build, scan, assets),
        "generation": _generation(build),
        "loading": _loading(build, repo, scan.schemas),
        "evaluation": _evaluation(build, repo),
        "license": _licence_section(build, licence),
        "split": build.split,
    }
    path = template_path(build.benchmark)
    body = fill_template(path.read_text(encoding="utf-8") if path else _FALLBACK, values)
    manifest_sha256 = hashlib.sha256(store.read(MANIFEST) or b"").hexdigest()
    kept = {k: options[k] for k in OPTIONS if options.get(k) is not None}
    stated = f"options={json.dumps(kept, separators=(',', ':'))} ".replace(">", "\\u003e") if kept else ""
    marker = f"<!-- {MARKER}: plan_id={build.manifest.get('plan_id')} manifest_sha256={manifest_sha256} {stated}-->"
    text = f"---\n{dump_yaml(metadata)}---\n\n{body.strip()}\n\n{marker}\n"
    return Card(text=text, metadata=metadata, assets=assets, configs=build.configs(), schemas=scan.schemas,
                refused=build.refused_note())  # fmt: skip


def configs_yaml(directory: str | Path) -> str:
    """The `datasets` part of the card alone (``configs`` and ``dataset_info``), as YAML text."""
    build = Build.open(CardStore(directory).where)
    metadata = build_metadata(build, scan_build(build), licence_for(build.manifest))
    return dump_yaml({k: metadata[k] for k in ("configs", "dataset_info")})


def write_configs_yaml(directory: str | Path) -> None:
    """Write :data:`CONFIGS_YAML` into a build without a card (``--no-card``), so ``datasets.load_dataset(DIR,
    name=<subset>)`` loads one subset with its declared features, as with the card (nothing for a build without any
    sample)."""
    if Build.open(CardStore(directory).where).configs():
        CardStore(directory).write(CONFIGS_YAML, configs_yaml(directory).encode("utf-8"))


def write_card(directory: str | Path, **options: Any) -> Card:
    """Render and write ``README.md`` and the figures (``images/``) of a build directory; see :func:`render_card`."""
    card = render_card(directory, **options)
    save_card(directory, card)
    return card


def refresh_card(directory: str | Path) -> Card | None:
    """Write the card of a finished build unless the README already is the card of this very manifest or the build
    has no sample at all (every input skipped: there is nothing to describe); the options the current card was
    written with (e.g. ``corruptgen card --license``) are kept. Returns the card written, or None."""
    store = CardStore(directory)
    if not Build.open(store.where).configs():
        return None
    current = card_marker(directory)
    if current is not None and current["manifest_sha256"] == hashlib.sha256(store.read(MANIFEST) or b"").hexdigest():
        return None
    return write_card(directory)


MAX_CARD_FILE = 64 << 20  # a card's README or figure corruptgen writes is far smaller


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
        if not is_regular(path):  # a link, FIFO or device in a build someone else made is never read
            return None
        with open_regular(path) as f:
            data = f.read(MAX_CARD_FILE + 1)
        if len(data) > MAX_CARD_FILE:
            raise CorruptgenError(f"{path} is over {MAX_CARD_FILE >> 20} MiB: not a card file corruptgen wrote")
        return data

    def write(self, rel: str, data: bytes) -> None:
        if self.remote is not None:
            self.remote.put_bytes(rel, data)
            return
        path = self.local / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)  # a link in the place of README.md or a figure is replaced, never written through

    def remove(self, rel: str) -> None:
        if self.remote is not None:
            if self.remote.exists(rel):
                self.remote.fs.rm(self.remote.path(rel))
        else:
            (self.local / rel).unlink(missing_ok=True)


def save_card(directory: str | Path, card: Card) -> None:
    """Write a rendered card into a build directory (figures it no longer has and a configs-only YAML are removed);
    the README goes last."""
    store = CardStore(directory)
    for rel in (GRID, DELTA_V, CONFIGS_YAML):
        if rel not in card.assets:
            store.remove(rel)
    for rel, data in card.assets.items():
        store.write(rel, data)
    store.write(README, card.text.encode("utf-8"))


def card_marker(directory: str | Path) -> dict[str, Any] | None:
    """The ``plan_id``, ``manifest_sha256`` and ``options`` a corruptgen-written README records, or None."""
    raw = CardStore(directory).read(README)
    if raw is None:
        return None
    pattern = rf"<!-- {MARKER}: plan_id=(\S+) manifest_sha256=(\S+) (?:options=(\{{.*\}}) )?-->"
    match = re.search(pattern, raw.decode("utf-8", "replace"))
    if not match:
        return None
    try:
        options = json.loads(match.group(3) or "{}")
    except ValueError:
        options = {}
    options = {k: v for k, v in options.items() if k in OPTIONS} if isinstance(options, dict) else {}
    return {"plan_id": match.group(1), "manifest_sha256": match.group(2), "options": options}

"""Publish a build directory as a Hub dataset repository with ``huggingface_hub``.

The card, ``manifest.json``, the card figures and every shard of the manifest are uploaded with ``upload_folder``. On
huggingface_hub >= 1.22 with ``hf_xet`` (its upload guide) that call commits large folders in several batches
(" (part N)" commit suffixes) and an interrupted upload resumes when the same command is run again (committed files are
skipped, uploaded chunks deduplicated). Where ``upload_folder`` would make one commit that cannot resume (an older
huggingface_hub, or no ``hf_xet``), a *large* build — more than ``LARGE_BYTES`` (1 GiB) or ``LARGE_FILES`` (1000
files) — goes through ``upload_large_folder``, the resumable large-folder upload of those releases. The token comes
from ``HF_TOKEN`` or ``hf auth login``; it is passed to the client only and never printed, logged or written.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.manifest import MANIFEST
from ..errors import CorruptgenError
from ..io.regular import refusal, sha256_regular
from ..io.storage import require_local
from ..wording import counted
from .card import ASSET_DIR, README, Build, Card, render_card, save_card
from .card_body import human_bytes

REPO_TYPE = "dataset"
ALLOW_PATTERNS = [README, MANIFEST, f"{ASSET_DIR}/*.png", "data/*/*.tar"]
HIDDEN_PATTERNS = [".*", "*/.*"]  # partial shards (.name.tar.partial), .cache/, .git/ ...
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
LARGE_BYTES = 1 << 30  # a build above 1 GiB or 1000 files is "large": it needs an upload that can resume
LARGE_FILES = 1000
_NETWORK_ERRORS = ("TransportError", "RequestError", "ConnectError", "ConnectionError", "TimeoutException",
                   "Timeout", "NetworkError", "ProxyError")  # fmt: skip


@dataclass
class PushPlan:
    """What :func:`push` uploads: the files (relative paths, sorted), their size, the card and the commit."""

    root: Path
    repo_id: str
    revision: str
    files: list[str]
    nbytes: int
    card: Card | None
    commit_message: str
    commit_description: str
    allow_patterns: list[str]
    ignore_patterns: list[str]
    gated: bool = False

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}"

    @property
    def large(self) -> bool:
        """More than ``LARGE_BYTES`` or ``LARGE_FILES``: an upload that cannot resume is not good enough."""
        return self.nbytes > LARGE_BYTES or len(self.files) > LARGE_FILES

    def describe(self, method: str | None = None) -> str:
        """What ``--dry-run`` prints: the files with their sizes, the upload call, the card in one line."""
        method = method or upload_method(self)
        lines = [f"would upload {counted(len(self.files), 'file')} ({human_bytes(self.nbytes)}) to {self.url} "
                 f"(revision {self.revision}) with {method}:", f"  commit: {self.commit_message}"]  # fmt: skip
        sizes = {rel: _size(self.root, rel, self.card) for rel in self.files}
        lines += [f"  {rel}  ({human_bytes(sizes[rel])})" for rel in self.files]
        if self.card is not None:
            meta = self.card.metadata
            lines.append(f"  README.md would be (re)written: {len(self.card.configs)} configs "
                         f"({', '.join(self.card.configs[:6])}{', ...' if len(self.card.configs) > 6 else ''}), "
                         f"licence {meta.get('license_name') or meta.get('license')}; "
                         f"`corruptgen card {self.root} --print` shows it")  # fmt: skip
        if self.gated:
            lines.append("  access gated on the ImageNet terms (repository setting gated=auto)")
        return "\n".join(lines)


@dataclass
class PushResult:
    plan: PushPlan
    commit_url: str | None = None
    notes: list[str] = field(default_factory=list)
    method: str | None = None  # the huggingface_hub call that uploaded the folder


def _size(root: Path, rel: str, card: Card | None) -> int:
    if card is not None and rel == README:
        return len(card.text.encode("utf-8"))
    if card is not None and rel in card.assets:
        return len(card.assets[rel])
    return (root / rel).stat().st_size


def _escape(path: str) -> str:
    """An fnmatch pattern matching exactly ``path``."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def check_repo_id(repo_id: str) -> None:
    if not _REPO_ID.match(repo_id or "") or ".." in repo_id or repo_id.endswith((".git", ".")):
        raise CorruptgenError(f"repository id must look like user/name or org/name, got {repo_id!r}")


def plan_push(
    directory: str | Path,
    repo_id: str,
    *,
    revision: str = "main",
    keep_card: bool = False,
    verify: bool = False,
    **card_options: Any,
) -> PushPlan:
    """Check a build directory and list exactly what :func:`push` would upload (nothing is written)."""
    from huggingface_hub.utils import filter_repo_objects

    check_repo_id(repo_id)
    require_local(directory, "push")
    build = Build.open(directory)
    root = build.root
    if not build.manifest.get("complete"):
        raise CorruptgenError(f"{root}: the build is incomplete; re-run the same `corruptgen build` before pushing")
    shards = [rel for name in build.subset_names() for rel in build.shards(name)]
    problems = []
    for rel in shards:
        rec = build.manifest["shards"][rel]
        path = root / rel
        if not os.path.lexists(path):
            problems.append(f"missing {rel}")
        elif (why := refusal(path)) is not None:  # a FIFO would block, a link would upload a file from elsewhere
            problems.append(f"{rel} {why}")
        elif path.stat().st_size != rec["bytes"] or (verify and sha256_regular(path) != rec["sha256"]):
            problems.append(f"{rel} does not match the manifest")
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise CorruptgenError(f"{root}: {'; '.join(problems[:3])}{more}; run `corruptgen verify {root}`")
    card = None
    if keep_card:
        if not (root / README).is_file():
            raise CorruptgenError(f"--keep-card: {root / README} does not exist; run `corruptgen card {root}`")
        assets = sorted(p.relative_to(root).as_posix() for p in (root / ASSET_DIR).glob("*.png"))
        gated = "extra_gated_prompt:" in (root / README).read_text(encoding="utf-8")
    else:
        card = render_card(root, repo_id=repo_id, **card_options)
        assets = sorted(card.assets)
        gated = "extra_gated_prompt" in card.metadata
    expected = sorted({README, MANIFEST, *assets, *shards})
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    extras = sorted(on_disk - set(expected))
    ignore = HIDDEN_PATTERNS + [_escape(rel) for rel in extras]
    # what upload_folder will select from the folder once the card is written (same filter function as the client)
    selected = sorted(filter_repo_objects(sorted(on_disk | set(expected)), allow_patterns=ALLOW_PATTERNS,
                                          ignore_patterns=ignore))  # fmt: skip
    if selected != expected:
        odd = sorted(set(selected) ^ set(expected))[:3]
        raise CorruptgenError(
            f"{root}: unexpected file names {odd}; shards and subsets must be named as corruptgen does"
        )
    recorded = local_paths(build.manifest)
    if recorded:
        print(f"corruptgen: warning: {root} was built by an earlier corruptgen: its manifest and samples record the "
              f"local path {recorded[0]}; rebuild it (--overwrite) before publishing", file=sys.stderr)  # fmt: skip
    counts = sum(build.samples(n) for n in build.configs())
    plan_id = build.manifest.get("plan_id")
    listing = ", ".join(build.configs()[:8]) + (", ..." if len(build.configs()) > 8 else "")
    from .._version import __version__

    return PushPlan(
        root=root,
        repo_id=repo_id,
        revision=revision,
        files=expected,
        nbytes=sum(_size(root, rel, card) for rel in expected),
        card=card,
        commit_message=f"Upload {build.benchmark} build {plan_id} with corruptgen",
        commit_description=f"{counts} samples in {len(build.configs())} subsets ({listing}); plan {plan_id}; "
        f"corruptgen {__version__}.",
        allow_patterns=list(ALLOW_PATTERNS),
        ignore_patterns=ignore,
        gated=gated,
    )  # fmt: skip


def local_paths(manifest: dict[str, Any]) -> list[str]:
    """The absolute or ``~`` paths a manifest records of its source: a build by a corruptgen that recorded them (one
    now records none, see :mod:`corruptgen.io.shown`)."""
    source = manifest.get("source") or {}
    spec = str(((manifest.get("plan") or {}).get("source") or {}).get("spec") or "")
    found = [spec.partition(":")[2], *(source.get(k) for k in ("path", "name", "list", "images", "labels", "pattern"))]
    found += list(source.get("shards") or [])
    return [v for v in found if isinstance(v, str) and (os.path.isabs(v) or v.startswith("~"))]


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def folder_upload_resumes() -> bool:
    """Whether ``upload_folder`` commits in batches and resumes (huggingface_hub >= 1.22 with ``hf_xet``)."""
    import importlib.util

    import huggingface_hub

    return _version_tuple(huggingface_hub.__version__) >= (1, 22) and importlib.util.find_spec("hf_xet") is not None


def upload_method(plan: PushPlan, api: Any = None) -> str:
    """``upload_large_folder`` for a large build where ``upload_folder`` cannot resume and the client still has the
    large-folder upload; ``upload_folder`` otherwise."""
    from huggingface_hub import HfApi

    has_large = hasattr(api if api is not None else HfApi, "upload_large_folder")
    return "upload_large_folder" if plan.large and has_large and not folder_upload_resumes() else "upload_folder"


def _get_token() -> str | None:
    import huggingface_hub

    return huggingface_hub.get_token()


def _scrub(text: str, token: str | None) -> str:
    if token:
        text = text.replace(token, "***")
    return re.sub(r"hf_[A-Za-z0-9]{8,}", "hf_***", text)


def explain_hub_error(exc: BaseException, repo_id: str) -> str | None:
    """One clear line for a Hub/network failure (None: not a Hub or network error)."""
    from huggingface_hub import errors

    retry = "re-run the same command to resume (files already uploaded are skipped)"
    if isinstance(exc, errors.LocalTokenNotFoundError):
        return "no Hugging Face token: run `hf auth login` or set HF_TOKEN (a token with write access)"
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set: unset it to push to the Hub"
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if status == 401:
            return "the Hugging Face token was rejected (invalid or expired): run `hf auth login` again or set HF_TOKEN"
        if status == 403:
            return (f"no permission to write to {repo_id}: use a token with write access to that user or organisation "
                    f"(fine-grained tokens need 'write' on the repository) ({first})")  # fmt: skip
        if status == 404 or isinstance(exc, errors.RepositoryNotFoundError):
            return f"{repo_id} was not found or this token cannot access it ({first})"
        if status == 429:
            return f"the Hub is rate-limiting requests: wait a few minutes, then {retry}"
        if status is not None and status >= 500:
            return f"the Hub answered with an error ({status}): {first}; {retry}"
        return f"the Hub refused the request ({status}): {first}"
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & set(_NETWORK_ERRORS) or isinstance(exc, (ConnectionError, TimeoutError)):
        return f"network failure talking to the Hub ({type(exc).__name__}: {exc}); check the connection, then {retry}"
    if isinstance(exc, errors.HFValidationError):
        return f"invalid repository id {repo_id!r}: {exc}"
    return None


@contextmanager
def hub_errors(repo_id: str, token: str | None) -> Iterator[None]:
    """Turn Hub and network failures into :class:`CorruptgenError` lines (with the token scrubbed)."""
    try:
        yield
    except CorruptgenError:
        raise
    except Exception as exc:
        message = explain_hub_error(exc, repo_id)
        if message is None:
            raise
        raise CorruptgenError(_scrub(message, token)) from None


def push(
    directory: str | Path,
    repo_id: str,
    *,
    private: bool | None = None,
    revision: str = "main",
    dry_run: bool = False,
    keep_card: bool = False,
    verify: bool = False,
    gate: bool = True,
    api: Any = None,
    **card_options: Any,
) -> PushResult:
    """Upload a build directory to the dataset repository ``repo_id`` (created if needed).

    Args:
        directory: the build directory (``<out>/<benchmark>``).
        repo_id: ``user/name`` or ``org/name``.
        private: create the repository private (``None``: the Hub default; an existing repo keeps its visibility).
        revision: branch to commit to (created from main if missing).
        dry_run: only plan: nothing is written or sent; the result's ``plan`` lists the files and holds the card.
        keep_card: upload the existing README.md as is instead of (re)writing it from the manifest.
        verify: re-hash every shard against the manifest before uploading.
        gate: for ImageNet-derived data, turn on access gating (the card carries the ImageNet terms prompt).
        api: an ``HfApi`` instance (default: a new one using the stored token).
        card_options: options of :func:`corruptgen.hub.render_card` (``license``, ``pretty_name``, ...).
    """
    plan = plan_push(directory, repo_id, revision=revision, keep_card=keep_card, verify=verify, **card_options)
    if dry_run:
        return PushResult(plan)
    token = _get_token()
    if not token:
        raise CorruptgenError("no Hugging Face token: run `hf auth login` or set HF_TOKEN (a token with write access)")
    if plan.card is not None:  # write the card that was planned (same bytes) before uploading the folder
        save_card(plan.root, plan.card)
    result = PushResult(plan)
    if plan.large and not folder_upload_resumes():
        result.notes.append(
            f"{len(plan.files)} files ({human_bytes(plan.nbytes)}): without huggingface_hub >= 1.22 and hf_xet "
            "upload_folder makes one commit that cannot resume; `pip install -U huggingface_hub hf_xet` to resume an "
            "interrupted upload by re-running the command"
            + (" (using upload_large_folder, which resumes)" if upload_method(plan, api) != "upload_folder" else "")
        )
    with hub_errors(repo_id, token):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo_id, branch=revision, repo_type=REPO_TYPE, exist_ok=True)
        if plan.gated and gate:
            try:
                api.update_repo_settings(repo_id, gated="auto", repo_type=REPO_TYPE)
            except Exception as exc:  # e.g. not an admin of the organisation: upload anyway, say so
                why = explain_hub_error(exc, repo_id) or f"{type(exc).__name__}: {exc}"
                result.notes.append(_scrub(f"could not turn on access gating ({why}); enable it in the repository "
                                           "settings", token))  # fmt: skip
        method = upload_method(plan, api)
        if method == "upload_large_folder":  # no commit message or create_pr there; it resumes from .cache/
            info = api.upload_large_folder(
                repo_id=repo_id,
                folder_path=str(plan.root),
                repo_type=REPO_TYPE,
                revision=revision,
                private=private,
                allow_patterns=plan.allow_patterns,
                ignore_patterns=list(plan.ignore_patterns),
            )
        else:
            info = api.upload_folder(
                repo_id=repo_id,
                folder_path=str(plan.root),
                repo_type=REPO_TYPE,
                revision=revision,
                allow_patterns=plan.allow_patterns,
                ignore_patterns=list(plan.ignore_patterns),
                commit_message=plan.commit_message,
                commit_description=plan.commit_description,
            )
    result.method = method
    result.commit_url = getattr(info, "commit_url", None) or (str(info) if info is not None else None)
    return result

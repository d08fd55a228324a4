"""Publish a build directory as a Hub dataset repository with ``huggingface_hub``.

One ``upload_folder`` call uploads the card, ``manifest.json``, the card figures and every shard of the manifest. On
huggingface_hub ≥ 1.22 with ``hf_xet`` (spec hub_and_scale.md §1.5) large folders are committed in several batches
(" (part N)" commit suffixes) and an interrupted upload resumes when the same command is run again: committed files are
skipped and uploaded chunks are deduplicated. The token comes from ``HF_TOKEN`` or ``hf auth login``; it is passed
to the client only and never printed, logged or written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..io.hashing import sha256_file
from ..manifest import MANIFEST
from .card import ASSET_DIR, README, Build, Card, render_card, save_card
from .card_body import human_bytes

REPO_TYPE = "dataset"
ALLOW_PATTERNS = [README, MANIFEST, f"{ASSET_DIR}/*.png", "data/*/*.tar"]
HIDDEN_PATTERNS = [".*", "*/.*"]  # partial shards (.name.tar.partial), .cache/, .git/ ...
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
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

    def describe(self) -> str:
        """Human-readable listing (what ``--dry-run`` prints before the card)."""
        lines = [f"would upload {len(self.files)} files ({human_bytes(self.nbytes)}) to {self.url} (revision "
                 f"{self.revision}) in one upload_folder call:", f"  commit: {self.commit_message}"]  # fmt: skip
        sizes = {rel: _size(self.root, rel, self.card) for rel in self.files}
        lines += [f"  {rel}  ({human_bytes(sizes[rel])})" for rel in self.files]
        if self.gated:
            lines.append("  access gated on the ImageNet terms (repository setting gated=auto)")
        return "\n".join(lines)


@dataclass
class PushResult:
    plan: PushPlan
    commit_url: str | None = None
    notes: list[str] = field(default_factory=list)


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
    build = Build.open(directory)
    root = build.root
    if not build.manifest.get("complete"):
        raise CorruptgenError(f"{root}: the build is incomplete; re-run the same `corruptgen build` before pushing")
    shards = [rel for name in build.subset_names() for rel in build.shards(name)]
    problems = []
    for rel in shards:
        rec = build.manifest["shards"][rel]
        path = root / rel
        if not path.is_file():
            problems.append(f"missing {rel}")
        elif path.stat().st_size != rec["bytes"] or (verify and sha256_file(path) != rec["sha256"]):
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


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


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
    import huggingface_hub

    if _version_tuple(huggingface_hub.__version__) < (1, 22):
        result.notes.append(
            f"huggingface_hub {huggingface_hub.__version__} uploads the folder in one commit that cannot resume; "
            "huggingface_hub >= 1.22 (with hf_xet) commits in batches and resumes"
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
    result.commit_url = getattr(info, "commit_url", None) or (str(info) if info is not None else None)
    return result

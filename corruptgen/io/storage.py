"""Where a build is written: a local directory or any fsspec URL (``s3://``, ``gs://``, ``hf://``, ``memory://``, ...).

Commit semantics per filesystem:

* **local** (a plain path or ``file://``): each shard is written under a hidden ``.partial`` name, fsynced and renamed
  into place; the manifest likewise. A killed build leaves only ``.partial`` files, deleted by the next run.
* **remote** (every other protocol): each shard is written to a local staging file (under ``$TMPDIR``), hashed, then
  uploaded with a single ``put`` to its final name; the staging file is deleted whether the upload succeeds or not
  (SIGTERM included, see :mod:`corruptgen.io.sigterm`). Its name, ``.corruptgen-<host>-<pid>-...``, says whose it is:
  those of killed processes of this host are deleted by the next remote build (and at the end of this one).
  Object stores (S3, GCS, Azure Blob) make an object visible only once its upload is complete, so a crash never leaves
  a partial object: that single put is the atomic commit (there is no rename on object stores). Filesystems whose
  ``put`` writes in place (sftp, ftp, smb, webdav, ...) can leave a truncated file after a crash; a resumed build
  re-hashes every recorded shard, so such a file is never trusted and is rewritten. On ``hf://`` each put is one
  commit to the Hub repository (slow, and rate-limited): building locally and running ``corruptgen push`` is better.

Only the driver writes the manifest; workers (local processes or Ray tasks) upload their own shards, so every worker
needs access (credentials) to the output location.

Every request to an S3 store is bounded: ``CORRUPTGEN_REMOTE_TIMEOUT`` seconds (default 15) to connect and for each
next piece of the answer, at most ``CORRUPTGEN_REMOTE_ATTEMPTS`` attempts (default 3, with botocore's backoff; the
standard ``AWS_MAX_ATTEMPTS`` / ``AWS_RETRY_MODE`` win when set). A server that stops answering fails the build in one
line within about a minute, one that is down within seconds: the processes of a build wait out one limit together, and
after an :class:`~corruptgen.io.remote_errors.UnreachableError` the driver makes no further request there (neither its
last manifest write nor the lock's removal).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from . import sigterm
from .hashing import sha256_stream
from .liveness import host_tag, process_gone
from .remote_errors import remote_errors

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*(://|::)")
_LOCAL_PROTOCOLS = ("file", "local")
#: protocol → (package, corruptgen extra) for the implementations corruptgen declares as extras
_EXTRAS = {"s3": ("s3fs", "s3"), "s3a": ("s3fs", "s3"), "gs": ("gcsfs", "gcs"), "gcs": ("gcsfs", "gcs")}
TEMP_PREFIX = ".corruptgen-"
_STAGING_NAME = re.compile(r"^\.corruptgen-([0-9a-f]{8})-([0-9]+)-")  # host tag, pid
TIMEOUT_ENV, ATTEMPTS_ENV = "CORRUPTGEN_REMOTE_TIMEOUT", "CORRUPTGEN_REMOTE_ATTEMPTS"
DEFAULT_TIMEOUT_S, DEFAULT_ATTEMPTS = 15.0, 3
#: object stores whose first path component is a bucket (checked when a location is opened)
_BUCKET_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss"}


def is_url(location: str | os.PathLike) -> bool:
    """Whether ``location`` names an fsspec URL (``proto://...`` or a chained ``a::b://...``) rather than a path."""
    return isinstance(location, str) and bool(_URL.match(location))


_HUB_RE = re.compile(r"^(?:hf://datasets/|hf:|hub:)(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<rev>[\w./-]+))?$")


def hub_dataset(where: str | os.PathLike) -> tuple[str, str | None] | None:
    """``(owner/name, revision)`` when ``where`` names a Hub dataset repository, else ``None``.

    A Hub repository is read only when asked for: ``hf:owner/name[@revision]`` or ``hf://datasets/owner/name[@rev]``
    (``hub:`` as ``hf:``). Anything else is a path or an fsspec URL: ``corruptgen-out/imagenet-c`` or ``no/such`` that
    does not exist is a missing build directory, never a Hub id (docs/hub.md, "Where a build is read from").
    """
    match = _HUB_RE.match(str(where)) if isinstance(where, str) else None
    return None if match is None else (match["repo"], match["rev"])


def hub_url(repo: str, revision: str | None = None) -> str:
    """The fsspec URL of a Hub dataset repository (``hf://datasets/owner/name[@revision]``)."""
    return f"hf://datasets/{repo}" + (f"@{revision}" if revision else "")


def _protocol(url: str) -> str:
    return re.split(r"://|::", url, maxsplit=1)[0].lower()


def local_path(location: str | os.PathLike) -> Path | None:
    """The local directory ``location`` names (a plain path, ``file://`` or ``local://``), or ``None`` if remote."""
    if not is_url(location):
        return Path(location)
    text = str(location)
    if "::" not in text.split("://", 1)[0] and _protocol(text) in _LOCAL_PROTOCOLS:
        from fsspec.implementations.local import LocalFileSystem

        return Path(LocalFileSystem._strip_protocol(text))
    return None


def join(base: str | os.PathLike, *parts: str) -> Path | str:
    """``base / parts`` for a path (a :class:`Path`) or a URL (a string, ``/``-joined)."""
    if not is_url(base):
        return Path(base).joinpath(*parts)
    return "/".join([str(base).rstrip("/"), *(p.strip("/") for p in parts)])


def require_local(location: str | os.PathLike, what: str, hint: str = "") -> None:
    """Fail clearly when a command that reads local build directories is given a remote URL or a Hub dataset
    (``hf://``, ``hf:owner/name``)."""
    if hub_dataset(location) is not None and not is_url(location):
        raise CorruptgenError(f"{what} reads a local build directory; {location} is a Hub dataset{hint}")
    if is_url(location) and local_path(location) is None:
        raise CorruptgenError(
            f"{what} reads a local build directory, not {location}: copy the build locally first (e.g. `aws s3 sync`, "
            f"`gcloud storage cp -r`, `hf download --repo-type dataset`){hint}"
        )


def request_limits() -> tuple[float, int]:
    """(seconds, attempts) allowed to one request to an object store (see the module), from the environment."""
    try:
        timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S)
        attempts = int(os.environ.get(ATTEMPTS_ENV) or DEFAULT_ATTEMPTS)
    except ValueError:
        timeout = attempts = 0
    if not (timeout > 0 and attempts >= 1):
        raise CorruptgenError(f"{TIMEOUT_ENV} must be a number of seconds > 0 and {ATTEMPTS_ENV} a whole number >= 1")
    return timeout, attempts


def _bounded(protocol: str) -> dict[str, Any]:
    """Storage options bounding every request of an S3 filesystem (botocore's timeouts and retries); the user's own
    fsspec ``config_kwargs`` win."""
    if protocol not in ("s3", "s3a"):
        return {}
    import fsspec.config

    timeout, attempts = request_limits()
    config: dict[str, Any] = {"connect_timeout": timeout, "read_timeout": timeout}
    if not (os.environ.get("AWS_MAX_ATTEMPTS") or os.environ.get("AWS_RETRY_MODE")):
        config["retries"] = {"total_max_attempts": attempts, "mode": "standard"}
    return {"config_kwargs": {**config, **(fsspec.config.conf.get(protocol, {}).get("config_kwargs") or {})}}


def _no_expect_continue(params: dict[str, Any], **_: Any) -> None:
    """botocore asks for ``100 Continue`` before sending a PutObject body, and aiohttp waits for that answer with no
    timeout at all (a server that stopped answering hung the build for good): the body is sent at once instead."""
    params.get("headers", {}).pop("Expect", None)


def _filesystem(url: str):
    from fsspec.core import url_to_fs

    try:
        options = _bounded(_protocol(url))
        fs, root = url_to_fs(url, **options)
        if options:
            fs.retries = 1  # s3fs would repeat botocore's attempts up to 5 times (a hung server: > 4 minutes)
            with remote_errors(url):
                client = fs.connect()  # s3fs: its aiobotocore client, made once per filesystem
            client.meta.events.register("before-call.s3", _no_expect_continue, unique_id="corruptgen-no-expect")
        return fs, root
    except ImportError as e:
        proto = _protocol(url.split("::")[-1]) if "::" in url else _protocol(url)
        if proto in _EXTRAS:
            package, extra = _EXTRAS[proto]
            raise CorruptgenError(f"{url}: install {package}: pip install 'corruptgen[{extra}]'") from None
        raise CorruptgenError(f"{url}: the {proto}:// filesystem is not installed ({e})") from None
    except ValueError as e:  # "Protocol not known: foo"
        raise CorruptgenError(f"{url}: unknown filesystem protocol ({e}); use a local path or an fsspec URL") from None


class Location:
    """A build directory behind an fsspec URL; paths below it are ``/``-separated relative paths.

    Opening one makes a first request on object stores (the bucket exists and these credentials may read it), so
    missing credentials, an unreachable endpoint, a missing bucket or denied access fail at once, in one line
    (:mod:`corruptgen.io.remote_errors`); every later call maps those failures the same way.
    """

    def __init__(self, url: str) -> None:
        stripped = url.rstrip("/")
        self.url = url if stripped.endswith(":") else stripped
        self.fs, root = _filesystem(self.url)
        self.root = root.rstrip("/")
        protocols = {self.fs.protocol} if isinstance(self.fs.protocol, str) else set(self.fs.protocol)
        self.bucket = self.root.lstrip("/").split("/", 1)[0] if protocols & _BUCKET_PROTOCOLS else None
        reap_staging()
        if self.bucket:
            with remote_errors(self.url, bucket=self.bucket):
                self.fs.info(self.bucket)

    def __str__(self) -> str:
        return self.url

    def path(self, rel: str = "") -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def url_of(self, rel: str) -> str:
        return join(self.url, rel)  # type: ignore[return-value]

    def exists(self, rel: str = "") -> bool:
        with remote_errors(self.url):
            return self.fs.exists(self.path(rel))

    def isfile(self, rel: str = "") -> bool:
        with remote_errors(self.url):
            return self.fs.isfile(self.path(rel))

    def size(self, rel: str) -> int | None:
        with remote_errors(self.url):
            try:
                return self.fs.size(self.path(rel))
            except FileNotFoundError:
                return None

    def read_bytes(self, rel: str) -> bytes | None:
        """The object's bytes, or ``None`` if it does not exist."""
        with remote_errors(self.url):
            try:
                return self.fs.cat_file(self.path(rel))
            except FileNotFoundError:
                return None

    def sha256(self, rel: str, chunk: int = 1 << 22) -> str | None:
        """sha256 of the object, streamed (never held whole in memory); ``None`` if it does not exist."""
        with remote_errors(self.url):
            try:
                with self.fs.open(self.path(rel), "rb") as f:
                    return sha256_stream(f, chunk)
            except FileNotFoundError:
                return None

    def put_file(self, local: str | os.PathLike, rel: str) -> None:
        """Upload a complete local file to ``rel`` with one put (atomic on object stores)."""
        target = self.path(rel)
        parent = target.rsplit("/", 1)[0]
        with remote_errors(self.url, bucket=self.bucket):
            if parent and not self.bucket:  # object stores have no folders (s3fs would look for the bucket again)
                self.fs.makedirs(parent, exist_ok=True)
            self.fs.put_file(os.fspath(local), target)

    def put_bytes(self, rel: str, data: bytes) -> None:
        """Upload ``data`` to ``rel`` the same way as a shard: a local temporary file, then one put."""
        with temp_file(".json") as (f, tmp):
            f.write(data)
            f.close()
            self.put_file(tmp, rel)

    def remove_tree(self, rel: str) -> None:
        if self.exists(rel):
            with remote_errors(self.url):
                self.fs.rm(self.path(rel), recursive=True)

    def find(self, rel: str, suffix: str) -> list[str]:
        """Relative paths of the files below ``rel`` whose names end with ``suffix``."""
        if not self.exists(rel):
            return []
        base = self.root.lstrip("/") + "/"
        found = []
        with remote_errors(self.url):
            listed = self.fs.find(self.path(rel))
        for p in listed:
            p = p.rstrip("/").lstrip("/")
            if p.endswith(suffix) and p.startswith(base):
                found.append(p[len(base) :])
        return sorted(found)


@cache
def location(url: str) -> Location:
    """The :class:`Location` of ``url``, opened once per process (workers reuse it for every shard)."""
    return Location(url)


class temp_file:
    """A local staging file open for writing, deleted on exit (success, failure or SIGTERM):
    ``with temp_file() as (f, p)``, or :meth:`close` (idempotent)."""

    def __init__(self, suffix: str = "") -> None:
        self._sigterm = sigterm.hold()
        try:
            fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{host_tag()}-{os.getpid()}-", suffix=suffix)
        except BaseException:
            self._release()
            raise
        self.path = Path(name)
        self.file = os.fdopen(fd, "wb")

    def __enter__(self) -> tuple[Any, Path]:
        return self.file, self.path

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.file.close()
        finally:
            self.path.unlink(missing_ok=True)
            self._release()

    def _release(self) -> None:
        if self._sigterm:
            self._sigterm = False
            sigterm.release()


def reap_staging(directory: str | None = None) -> int:
    """Delete the staging files in ``directory`` (default ``$TMPDIR``) that processes of this host left when they were
    killed (their pid is provably gone, :mod:`corruptgen.io.liveness`); returns how many."""
    removed = 0
    try:
        entries = list(os.scandir(directory or tempfile.gettempdir()))
    except OSError:
        return 0
    for entry in entries:
        match = _STAGING_NAME.match(entry.name)
        if match is None or match.group(1) != host_tag():
            continue
        try:
            written = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(written.st_mode) and process_gone(int(match.group(2)), since=written.st_mtime):
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed

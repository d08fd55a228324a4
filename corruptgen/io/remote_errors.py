"""One-line errors for remote build locations: credentials, endpoint and permission failures of fsspec filesystems
(s3fs/botocore above all) become a :class:`~corruptgen.errors.CorruptgenError` naming the URL, the cause and the
setting to check, instead of a library traceback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import CorruptgenError

#: AWS error codes that mean "these credentials may not do this"
_DENIED = {"AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
           "InvalidToken", "TokenRefreshRequired", "AccountProblem", "InvalidSecurity"}  # fmt: skip
_CREDENTIALS_HINT = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (docs/storage.md)"
_NETWORK = {"EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError", "ClientConnectorError",
            "ServerDisconnectedError", "ConnectionError", "TimeoutError", "ReadTimeoutError", "HTTPClientError",
            "InvalidEndpointError", "ClientOSError", "FSTimeoutError"}  # fmt: skip


class UnreachableError(CorruptgenError):
    """The remote location did not answer (refused, timed out, unresolvable): a request there is futile for now."""


def _chain(e: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _endpoint() -> str:
    where = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    return f"endpoint {where}" if where else "the default AWS endpoint (AWS_ENDPOINT_URL unset)"


def _error_code(e: BaseException) -> str | None:
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        return (response.get("Error") or {}).get("Code")
    return None


def describe(e: BaseException, url: str, *, bucket: str | None = None) -> CorruptgenError | None:
    """The one-line error for an exception raised while accessing ``url``; ``None`` when it is not an access problem
    (credentials, endpoint, permission, missing bucket, network)."""
    if isinstance(e, CorruptgenError):
        return e
    names: set[str] = set()
    for x in _chain(e):
        names.update(t.__name__ for t in type(x).__mro__)
    codes = {c for c in map(_error_code, _chain(e)) if c}
    if names & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
        return CorruptgenError(f"cannot access {url}: no credentials found: {_CREDENTIALS_HINT}")
    if "ProfileNotFound" in names:
        return CorruptgenError(f"cannot access {url}: {_first_line(e)} (AWS_PROFILE names a profile that is not in "
                               "~/.aws/config or ~/.aws/credentials)")  # fmt: skip
    s3 = url.split("://", 1)[0].split("::")[-1].lower() in ("s3", "s3a")
    if codes & _DENIED or isinstance(e, PermissionError):
        code = next(iter(sorted(codes & _DENIED)), "permission denied")
        hint = f"check the credentials: {_CREDENTIALS_HINT}; and the bucket's permissions" if s3 else (
            "check the credentials and permissions for that filesystem")  # fmt: skip
        return CorruptgenError(f"cannot access {url}: {code}: {_first_line(e)} ({hint})")
    if "NoSuchBucket" in codes or (bucket and isinstance(e, FileNotFoundError)):
        name = f"bucket {bucket}" if bucket else "such bucket"
        where = f" at {_endpoint()} (create it first, or fix the URL or AWS_ENDPOINT_URL)" if s3 else (
            " (create it first, or fix the URL)")  # fmt: skip
        return CorruptgenError(f"cannot access {url}: no {name}{where}")
    if names & _NETWORK:
        if not s3:
            return UnreachableError(f"cannot reach {url}: {_first_line(e)} (check the network)")
        return UnreachableError(f"cannot reach {url} at {_endpoint()}: {_first_line(e)} (check AWS_ENDPOINT_URL and "
                                "the network)")  # fmt: skip
    if names & {"BotoCoreError", "ClientError", "NoRegionError"}:
        return CorruptgenError(f"cannot access {url}: {type(e).__name__}: {_first_line(e)}")
    return None


@contextmanager
def remote_errors(url: str, *, bucket: str | None = None) -> Iterator[None]:
    """Re-raise access problems inside the block as one-line :class:`CorruptgenError` (others unchanged)."""
    try:
        yield
    except Exception as e:
        mapped = describe(e, url, bucket=bucket)
        if mapped is None or mapped is e:
            raise
        raise mapped from None


def read_failure(e: BaseException, url: str) -> CorruptgenError:
    """The one-line error for a failed read of ``url``: :func:`describe`'s, else the exception's first line."""
    return describe(e, url) or CorruptgenError(f"cannot read {url}: {type(e).__name__}: {_first_line(e)}")

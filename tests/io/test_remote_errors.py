"""Access failures of remote locations become one line naming the URL and what to check."""

from __future__ import annotations

import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.io.remote_errors import describe, remote_errors


def test_generic_filesystems_get_no_aws_hints():
    denied = describe(PermissionError("403 Forbidden"), "gs://bucket/out")
    assert str(denied) == ("cannot access gs://bucket/out: permission denied: 403 Forbidden (check the credentials "
                           "and permissions for that filesystem)")  # fmt: skip
    assert str(describe(ConnectionRefusedError("refused"), "sftp://host/out")) == (
        "cannot reach sftp://host/out: refused (check the network)")  # fmt: skip
    assert "no bucket b (create it first" in str(describe(FileNotFoundError("b"), "gs://b/x", bucket="b"))


def test_s3_hints_name_the_aws_settings(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    refused = describe(ConnectionRefusedError("refused"), "s3://b/x")
    assert (
        str(refused) == "cannot reach s3://b/x at endpoint http://127.0.0.1:9000: refused (check AWS_ENDPOINT_URL "
        "and the network)"
    )
    assert "AWS_PROFILE" in str(describe(PermissionError("denied"), "s3://b/x"))


def test_other_errors_are_left_alone():
    assert describe(ValueError("a bug"), "s3://b/x") is None
    with pytest.raises(ValueError, match="a bug"), remote_errors("s3://b/x"):
        raise ValueError("a bug")
    with pytest.raises(CorruptgenError, match=r"^cannot access s3://b/x: permission denied"), remote_errors("s3://b/x"):
        raise PermissionError("denied")

"""Builds on a real S3-protocol server (moto's threaded server on 127.0.0.1), configured with nothing but the standard
AWS environment variables: build, verify, resume after an interruption, ``torch_loader`` read-back, and one-line
errors (exit 2) for missing credentials, a wrong endpoint, a missing bucket and denied access."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="S3 tests need s3fs (the test extra)")
pytest.importorskip("flask", reason="moto's server needs moto[server] (the test extra)")
moto_server = pytest.importorskip("moto.server", reason="S3 tests need moto[server] (the test extra)")

import corruptgen  # noqa: E402
from corruptgen.cli import main  # noqa: E402
from corruptgen.errors import CorruptgenError  # noqa: E402
from corruptgen.io import storage  # noqa: E402
from corruptgen.io.remote_errors import describe  # noqa: E402

BUCKET = "cg-bucket"
KW = dict(subsets="solarize", limit=6, shard_size=2)  # clean + solarize, 3 chunks: 6 shards


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    """A moto S3 server on 127.0.0.1 with one bucket (created with the server's own credentials-free API)."""
    import boto3

    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="test",
                 region_name="us-east-1").create_bucket(Bucket=BUCKET)  # fmt: skip
    yield url
    server.stop()


def _fresh_clients() -> None:
    """Forget cached filesystems, so the next one reads the environment again."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    storage.location.cache_clear()


@pytest.fixture
def aws(endpoint, monkeypatch, tmp_path):
    """Only the standard AWS variables; no profile, no ~/.aws files, no instance metadata lookups."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
           "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _fresh_clients()
    yield env
    _fresh_clients()


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return corruptgen.build("syn2nat", out=out, **KW).out_dir


def _same_bytes(url: str, local: Path) -> None:
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    manifest = json.loads((local / "manifest.json").read_text())
    assert json.loads(fs.cat_file(f"{root}/manifest.json"))["shards"] == manifest["shards"]
    for rel in manifest["shards"]:
        assert fs.cat_file(f"{root}/{rel}") == (local / rel).read_bytes(), rel


def test_build_verify_and_torch_loader_read_back(aws, local_build):
    from corruptgen.hub import torch_loader

    result = corruptgen.build("syn2nat", out=f"s3://{BUCKET}/plain", **KW)
    url = f"s3://{BUCKET}/plain/syn2nat"
    assert result.out_dir == url and result.written_shards == 6
    _same_bytes(url, local_build)
    assert corruptgen.verify(url).ok and corruptgen.verify(url).checked == 6
    loader = torch_loader(url, batch_size=4, num_workers=2)
    seen = Counter((m["subset"], m["key"]) for _, _, metas in loader for m in metas)
    assert sum(seen.values()) == 12 and set(seen.values()) == {1}
    assert {s for s, _ in seen} == {"clean", "solarize"}


def test_interrupted_build_resumes(aws, local_build, monkeypatch):
    put_file, puts = storage.Location.put_file, []

    def interrupted(self, local, rel):
        if rel.endswith(".tar"):
            puts.append(rel)
            if len(puts) == 3:  # Ctrl-C while the third shard is being uploaded
                raise KeyboardInterrupt
        put_file(self, local, rel)

    monkeypatch.setattr(storage.Location, "put_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        corruptgen.build("syn2nat", out=f"s3://{BUCKET}/resume", **KW)
    monkeypatch.setattr(storage.Location, "put_file", put_file)  # undo() would drop the credentials too
    url = f"s3://{BUCKET}/resume/syn2nat"
    assert not corruptgen.load_manifest(url)["complete"] and not corruptgen.verify(url).ok
    result = corruptgen.build("syn2nat", out=f"s3://{BUCKET}/resume", **KW)
    assert (result.written_shards, result.reused_shards) == (4, 2)
    _same_bytes(url, local_build)
    assert corruptgen.verify(url).ok
    again = corruptgen.build("syn2nat", out=f"s3://{BUCKET}/resume", workers=2, **KW)  # the finished build re-run
    assert (again.written_shards, again.reused_shards) == (0, 6) and again.manifest == result.manifest


def _one_line_exit_2(capsys, *args: str) -> str:
    start = time.monotonic()
    assert main([*args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert time.monotonic() - start < 30
    return err


def test_missing_credentials_is_one_line_exit_2(aws, monkeypatch, capsys):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    _fresh_clients()
    err = _one_line_exit_2(capsys, "build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--no-progress",
                           "--out", f"s3://{BUCKET}/nocreds")  # fmt: skip
    assert "no credentials found" in err and "AWS_ACCESS_KEY_ID" in err
    assert "no credentials found" in _one_line_exit_2(capsys, "verify", f"s3://{BUCKET}/plain/syn2nat")


def test_wrong_endpoint_is_one_line_exit_2(aws, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # botocore retries a refused connection 5 times by default
    _fresh_clients()
    err = _one_line_exit_2(capsys, "build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--no-progress",
                           "--out", f"s3://{BUCKET}/wrong")  # fmt: skip
    assert err.startswith(f"corruptgen: error: cannot reach s3://{BUCKET}/wrong/syn2nat at endpoint http://127.0.0.1:")
    assert "AWS_ENDPOINT_URL" in err


def test_missing_bucket_is_one_line_exit_2(aws, capsys):
    err = _one_line_exit_2(capsys, "build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--no-progress",
                           "--out", "s3://no-such-bucket/x")  # fmt: skip
    assert "no bucket no-such-bucket at endpoint" in err


def test_the_command_line_prints_one_line(aws):
    """The installed command end to end (its own process): no credentials → one line on stderr, exit 2."""
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    proc = subprocess.run([sys.executable, "-m", "corruptgen", "verify", f"s3://{BUCKET}/plain/syn2nat"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "no credentials found" in proc.stderr


@pytest.mark.parametrize("code", ["AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"])
def test_denied_access_maps_to_one_line(code):
    """The exceptions botocore raises for refused credentials, as s3fs re-raises them (PermissionError or OSError
    with the ClientError as cause)."""
    from botocore.exceptions import ClientError
    from s3fs.errors import translate_boto_error

    error = ClientError({"Error": {"Code": code, "Message": "The request was refused"}}, "PutObject")
    translated = translate_boto_error(error)
    for raised in (error, translated):
        mapped = describe(raised, "s3://b/x")
        assert isinstance(mapped, CorruptgenError) and code in str(mapped) and "\n" not in str(mapped)
        assert "AWS_ACCESS_KEY_ID" in str(mapped)
    assert describe(ValueError("a bug"), "s3://b/x") is None  # not an access problem: left alone

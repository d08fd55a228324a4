"""``corruptgen push``: dry-run listing, the upload call against huggingface_hub with its network layer replaced,
clear errors, and the token never leaking into output or files."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import HfApi
from huggingface_hub.hf_api import RepoUrl

from corruptgen.cli import main
from corruptgen.errors import CorruptgenError

push_mod = importlib.import_module("corruptgen.hub.push")  # the module (corruptgen.hub.push is the function)

TOKEN = "hf_FakeTokenForTests0123456789abcdef"
REPO = "someone/syn2nat-test"


def expected_files(root: Path) -> list[str]:
    manifest = json.loads((root / "manifest.json").read_text())
    shards = [rel for rel, rec in manifest["shards"].items() if rec["samples"]]
    return sorted(["README.md", "manifest.json", "images/sample_grid.png", *shards])


def everything_written(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.fixture
def fake_token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return TOKEN


@pytest.fixture
def no_token(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_OIDC_RESOURCE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))


class Recorder:
    """Replaces the HfApi methods that talk to the Hub."""

    def __init__(self, monkeypatch, *, real_upload_folder: bool = False) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []
        self.commits: list[dict] = []

        def record(name, result=None):
            def method(api, *args, **kwargs):
                self.calls.append((name, args, kwargs))
                return result

            return method

        monkeypatch.setattr(
            HfApi, "create_repo", record("create_repo", RepoUrl(f"https://huggingface.co/datasets/{REPO}"))
        )
        monkeypatch.setattr(HfApi, "create_branch", record("create_branch"))
        monkeypatch.setattr(HfApi, "update_repo_settings", record("update_repo_settings"))
        if real_upload_folder:  # the real upload_folder selects the files; only the commit itself is replaced
            monkeypatch.setattr(huggingface_hub.hf_api, "is_xet_available", lambda: False)
            monkeypatch.setattr(HfApi, "_validate_yaml", lambda api, content, **kw: None)

            def create_commit(api, *, repo_id, operations, commit_message, **kwargs):
                self.commits.append({"repo_id": repo_id, "paths": sorted(op.path_in_repo for op in operations),
                                     "message": commit_message, **kwargs})  # fmt: skip
                url = f"https://huggingface.co/datasets/{REPO}/commit/abc"
                return huggingface_hub.CommitInfo(url, commit_message, "", "abc")

            monkeypatch.setattr(HfApi, "create_commit", create_commit)
        else:
            monkeypatch.setattr(HfApi, "upload_folder", record("upload_folder", None))

    def named(self, name: str) -> list[tuple[tuple, dict]]:
        return [(a, k) for n, a, k in self.calls if n == name]


def test_dry_run_lists_exactly_the_files_and_writes_nothing(syn2nat_copy, capsys, no_token):
    from corruptgen.hub.card_body import human_bytes

    (syn2nat_copy / "notes.txt").write_text("not part of the build")
    (syn2nat_copy / "data/solarize/.test-00001.tar.partial").write_bytes(b"x")
    before = sorted(p.relative_to(syn2nat_copy).as_posix() for p in syn2nat_copy.rglob("*"))
    assert main(["push", str(syn2nat_copy), REPO, "--dry-run"]) == 0
    out = capsys.readouterr().out
    listed = dict(re.findall(r"(?m)^  (\S+)  \((.+)\)$", out))
    assert sorted(listed) == expected_files(syn2nat_copy)
    shard = "data/solarize/test-00000.tar"
    assert listed[shard] == human_bytes((syn2nat_copy / shard).stat().st_size)  # sizes, not just names
    assert "with upload_folder:" in out and "README.md would be (re)written: 19 configs (clean, " in out
    assert "configs:" not in out and "license: bsd-3-clause" not in out and "## Subsets" not in out  # not the card
    assert "notes.txt" not in out and ".partial" not in out and TOKEN not in out
    assert sorted(p.relative_to(syn2nat_copy).as_posix() for p in syn2nat_copy.rglob("*")) == before
    plan = push_mod.plan_push(syn2nat_copy, REPO)
    assert plan.files == expected_files(syn2nat_copy) and plan.card is not None and not plan.large
    assert "notes[.]txt" not in plan.ignore_patterns and "notes.txt" in plan.ignore_patterns


def _large(monkeypatch, *, resumes: bool, has_large_folder: bool) -> list[dict]:
    """Make the 21-file test build "large" and choose what the installed client can do; returns recorded calls."""
    calls: list[dict] = []
    monkeypatch.setattr(push_mod, "LARGE_FILES", 5)
    monkeypatch.setattr(push_mod, "folder_upload_resumes", lambda: resumes)
    if has_large_folder:
        monkeypatch.setattr(HfApi, "upload_large_folder", lambda api, **kw: calls.append(kw), raising=False)
    else:
        monkeypatch.delattr(HfApi, "upload_large_folder", raising=False)
    return calls


def test_a_large_build_uses_the_resumable_large_folder_upload(syn2nat_copy, fake_token, monkeypatch, capsys):
    calls = _large(monkeypatch, resumes=False, has_large_folder=True)
    rec = Recorder(monkeypatch)
    assert main(["push", str(syn2nat_copy), REPO, "--dry-run"]) == 0
    assert "with upload_large_folder:" in capsys.readouterr().out and not calls
    assert main(["push", str(syn2nat_copy), REPO, "--revision", "v1"]) == 0
    (kw,) = calls
    assert kw["repo_id"] == REPO and kw["repo_type"] == "dataset" and kw["revision"] == "v1"
    assert Path(kw["folder_path"]) == syn2nat_copy and kw["allow_patterns"] == push_mod.ALLOW_PATTERNS
    assert ".*" in kw["ignore_patterns"] and rec.named("upload_folder") == []
    out, err = capsys.readouterr()
    assert "with upload_large_folder" in out and "using upload_large_folder, which resumes" in err


def test_a_large_build_uses_upload_folder_where_it_resumes(syn2nat_copy, fake_token, monkeypatch, capsys):
    calls = _large(monkeypatch, resumes=True, has_large_folder=True)
    rec = Recorder(monkeypatch)
    assert main(["push", str(syn2nat_copy), REPO]) == 0
    assert not calls and len(rec.named("upload_folder")) == 1 and "note" not in capsys.readouterr().err


def test_a_large_build_without_a_resumable_upload_says_how_to_get_one(syn2nat_copy, fake_token, monkeypatch, capsys):
    _large(monkeypatch, resumes=False, has_large_folder=False)  # e.g. huggingface_hub >= 1.22 without hf_xet
    rec = Recorder(monkeypatch)
    assert main(["push", str(syn2nat_copy), REPO]) == 0
    assert len(rec.named("upload_folder")) == 1 and "pip install -U huggingface_hub hf_xet" in capsys.readouterr().err


def test_push_calls_the_hub_client_and_never_leaks_the_token(syn2nat_copy, capsys, fake_token, monkeypatch):
    rec = Recorder(monkeypatch)
    assert main(["push", str(syn2nat_copy), REPO, "--private"]) == 0
    out, err = capsys.readouterr()
    ((args, kwargs),) = rec.named("create_repo")
    assert args == (REPO,) and kwargs == {"repo_type": "dataset", "private": True, "exist_ok": True}
    ((_, up),) = rec.named("upload_folder")
    assert up["repo_id"] == REPO and up["repo_type"] == "dataset" and up["revision"] == "main"
    assert Path(up["folder_path"]) == syn2nat_copy and up["allow_patterns"] == push_mod.ALLOW_PATTERNS
    assert up["commit_message"].startswith("Upload syn2nat build ")
    assert rec.named("update_repo_settings") == [] and rec.named("create_branch") == []  # not ImageNet; main
    assert f"uploaded {len(expected_files(syn2nat_copy))} files" in out
    assert (syn2nat_copy / "README.md").is_file() and (syn2nat_copy / "images/sample_grid.png").is_file()
    assert TOKEN not in out + err and TOKEN.encode() not in everything_written(syn2nat_copy)


def test_upload_folder_selects_exactly_the_planned_files(syn2nat_copy, fake_token, monkeypatch, capsys):
    (syn2nat_copy / "notes.txt").write_text("not part of the build")
    (syn2nat_copy / "data/solarize/.test-00001.tar.partial").write_bytes(b"x")
    rec = Recorder(monkeypatch, real_upload_folder=True)
    assert main(["push", str(syn2nat_copy), REPO, "--revision", "v1"]) == 0
    ((commit),) = rec.commits
    assert commit["repo_id"] == REPO and commit["paths"] == expected_files(syn2nat_copy)
    assert commit["message"].startswith("Upload syn2nat build ") and commit["revision"] == "v1"
    assert rec.named("create_branch")[0][1]["branch"] == "v1"
    out, err = capsys.readouterr()
    assert "commit/abc" in out and TOKEN not in out + err


def test_imagenet_data_turns_on_gating(syn2nat_copy, fake_token, monkeypatch):
    manifest = json.loads((syn2nat_copy / "manifest.json").read_text())
    manifest["source"] = {
        **manifest["source"],
        "kind": "imagefolder",
        "layout": "imagenet-val",
        "spec": "imagefolder:x",
    }
    (syn2nat_copy / "manifest.json").write_text(json.dumps(manifest))
    rec = Recorder(monkeypatch)
    result = push_mod.push(syn2nat_copy, REPO)
    assert rec.named("update_repo_settings")[0][1] == {"gated": "auto", "repo_type": "dataset"}
    assert result.plan.gated and "imagenet-terms-of-access" in (syn2nat_copy / "README.md").read_text()


def test_keep_card_uploads_the_existing_readme(syn2nat_copy, fake_token, monkeypatch):
    (syn2nat_copy / "README.md").write_text("---\nlicense: mit\n---\n# hand-written\n")
    rec = Recorder(monkeypatch)
    plan = push_mod.push(syn2nat_copy, REPO, keep_card=True).plan
    assert plan.card is None and "images/sample_grid.png" not in plan.files and rec.named("upload_folder")
    assert (syn2nat_copy / "README.md").read_text().endswith("# hand-written\n")


def test_no_token_is_a_clear_error(syn2nat_copy, capsys, no_token):
    assert main(["push", str(syn2nat_copy), REPO]) == 2
    err = capsys.readouterr().err
    assert "no Hugging Face token" in err and "hf auth login" in err
    assert not (syn2nat_copy / "README.md").exists()  # nothing written before the token check


def _http_error(status: int, message: str):
    import httpx2

    request = httpx2.Request("POST", "https://huggingface.co/api/repos/create")
    response = httpx2.Response(status, request=request)
    return huggingface_hub.errors.HfHubHTTPError(message, response=response)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (lambda: _http_error(401, "Invalid credentials"), "token was rejected"),
        (
            lambda: _http_error(403, f"You don't have the rights to create a dataset under this namespace {TOKEN}"),
            "no permission to write to someone/syn2nat-test",
        ),
        (lambda: _http_error(503, "Service Unavailable"), "re-run the same command to resume"),
        (
            lambda: __import__("httpx2").ConnectError(f"[Errno -3] name resolution failed (token {TOKEN})"),
            "network failure talking to the Hub",
        ),
    ],
)
def test_hub_errors_are_one_clear_line(syn2nat_copy, capsys, fake_token, monkeypatch, error, expected):
    def fail(api, *args, **kwargs):
        raise error()

    monkeypatch.setattr(HfApi, "create_repo", fail)
    assert main(["push", str(syn2nat_copy), REPO]) == 2
    out, err = capsys.readouterr()
    assert expected in err and len(err.strip().splitlines()) == 1
    assert TOKEN not in out + err


def test_push_refuses_bad_input(syn2nat_copy, fake_token):
    with pytest.raises(CorruptgenError, match="user/name"):
        push_mod.plan_push(syn2nat_copy, "no-namespace")
    (syn2nat_copy / "data/posterize/test-00000.tar").unlink()
    with pytest.raises(CorruptgenError, match=r"missing data/posterize/test-00000\.tar"):
        push_mod.plan_push(syn2nat_copy, REPO)

"""A new user's mistakes, each answered in one line with the right exit code (issue N), and manifests that must not
pass or be rewritten (issue Q): where a build is read from, narrower re-builds, empty builds, argparse mistakes,
``verify`` recomputing ids and refusing manifests from a newer corruptgen, start-up without torch."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import corruptgen
from corruptgen.cli import main
from corruptgen.engine.reader import Build
from corruptgen.errors import CorruptgenError, NoSamplesError


def one_line_error(capsys, argv: list[str], code: int = 2) -> str:
    """Run the CLI; it must exit ``code`` with exactly one stderr line ``corruptgen: error: ...``."""
    try:
        got = main(argv)
    except SystemExit as e:  # argparse exits itself
        got = e.code
    err = capsys.readouterr().err
    assert got == code, (got, err)
    assert err.startswith("corruptgen: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """``<tmp>/corruptgen-out/syn2nat``: solarize + clean from 2 sample photos, no card."""
    out = tmp_path_factory.mktemp("built") / "corruptgen-out"
    corruptgen.build("syn2nat", out=out, subsets="solarize", limit=2, card=False)
    return out / "syn2nat"


@pytest.fixture
def build_copy(built, tmp_path) -> Path:
    shutil.copytree(built, tmp_path / "corruptgen-out" / "syn2nat")
    return tmp_path / "corruptgen-out" / "syn2nat"


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network request was made")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


# ---------------------------------------------------------------------------- N2: a missing path is not a Hub id
def test_a_missing_local_path_is_not_a_hub_id(build_copy, tmp_path, monkeypatch, capsys, no_network):
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["export", "corruptgen-out/imagenet-c", "--out", "exports", "--no-progress"])
    assert "no build directory at corruptgen-out/imagenet-c" in err and "not a build directory" in err
    assert "corruptgen-out holds the builds syn2nat" in err
    for argv in (["eval", "no/such"], ["verify", "no/such"], ["card", "no/such"],
                 ["push", "no/such", "user/name", "--dry-run"]):  # fmt: skip
        err = one_line_error(capsys, argv)
        assert "no build directory at no/such" in err and "write hf:no/such" in err, (argv, err)
    for reader in (Build.open, corruptgen.load, corruptgen.torch_loader):
        with pytest.raises(CorruptgenError, match="not a build directory"):
            reader("no/such")


def test_the_folder_holding_builds_names_them(build_copy, capsys):
    for command in ("verify", "export", "eval"):
        err = one_line_error(
            capsys, [command, str(build_copy.parent), *(["--out", "x"] if command == "export" else [])]
        )
        assert "it holds the builds syn2nat: pass one of them" in err, (command, err)


# ---------------------------------------------------------------------------- N3: narrower re-builds
def test_a_narrower_build_reuses_the_built_one_and_keeps_the_rest(build_copy, capsys):
    out = str(build_copy.parent)
    manifest = (build_copy / "manifest.json").read_bytes()
    tars = {p: p.stat().st_mtime_ns for p in build_copy.rglob("*.tar")}
    argv = ["build", "syn2nat", "--out", out, "--limit", "2", "--no-card", "--no-progress"]
    assert main([*argv, "--subsets", "solarize", "--no-clean"]) == 0
    cap = capsys.readouterr()
    assert "holds solarize with these settings: nothing to render; its 1 other subset (clean) is kept" in cap.err
    assert "(0 written, 2 reused)" in cap.out
    assert (build_copy / "manifest.json").read_bytes() == manifest
    assert {p: p.stat().st_mtime_ns for p in build_copy.rglob("*.tar")} == tars
    err = one_line_error(capsys, ["build", "syn2nat", "--out", out, "--subsets", "solarize", "--limit", "1"])
    assert "other settings: --limit 1 (built: 2); use --overwrite to replace it, or another --out" in err
    err = one_line_error(capsys, ["build", "syn2nat", "--out", out, "--subsets", "solarize"])  # the full source
    assert "no --limit (built: 2)" in err
    assert (build_copy / "manifest.json").read_bytes() == manifest


# ---------------------------------------------------------------------------- N4: every input skipped
def test_a_build_without_samples_is_an_error(tmp_path, capsys):
    junk = tmp_path / "junk" / "cls"
    junk.mkdir(parents=True)
    for i in range(3):
        (junk / f"img{i}.jpg").write_bytes(b"not an image %d" % i)
    argv = ["build", "syn2nat", "--source", f"imagefolder:{junk.parent}", "--subsets", "solarize", "--out",
            str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    err = one_line_error(capsys, argv)
    assert "no samples: 3 of 3 inputs skipped (3 x not a recognised image format)" in err
    assert "manifest.json 'skipped'" in err
    one_line_error(capsys, [*argv, "--strict"], code=1)
    with pytest.raises(NoSamplesError, match="no samples"):
        corruptgen.build("syn2nat", source=f"imagefolder:{junk.parent}", subsets="solarize", out=tmp_path / "api")


# ---------------------------------------------------------------------------- N7: exit codes and one-line errors
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["build", "syn2nat", "--workers", "0"], "argument --workers: expected a positive integer, got 0"),
        (["build", "syn2nat", "--limit", "abc"], "argument --limit: expected an integer, got 'abc'"),
        (["build", "syn2nat", "--format", "gif"], "argument --format: invalid choice: 'gif'"),
        (["build"], "the following arguments are required: benchmark"),
        (["verify"], "the following arguments are required: directory"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_argparse_mistakes_are_one_line(argv, message, capsys):
    err = one_line_error(capsys, argv)
    assert message in err and "usage:" not in err and "--help" in err


def test_an_unwritable_output_and_a_remote_push_exit_2(monkeypatch, capsys):
    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/ro/out/syn2nat")

    monkeypatch.setattr(corruptgen.api, "render", read_only)
    err = one_line_error(capsys, ["build", "syn2nat", "--subsets", "solarize", "--out", "/ro/out", "--limit", "1"])
    assert "Permission denied: /ro/out/syn2nat" in err
    err = one_line_error(capsys, ["push", "s3://bucket/builds/syn2nat", "user/name", "--dry-run"])
    assert "push reads a local build directory, not s3://bucket/builds/syn2nat" in err and "missing" not in err


# ---------------------------------------------------------------------------- N10: the hint, writable arrays
def test_the_subset_hint_names_each_candidate_once(capsys):
    err = one_line_error(capsys, ["build", "syn2nat", "--subsets", "solarise"])
    near = err.split("did you mean ", 1)[1].rstrip("?\n").split(", ")
    assert near[0] == "solarize" and len(near) == len(set(near)), err


def test_random_corruption_returns_a_writable_array():
    torch = pytest.importorskip("torch")
    from corruptgen.augment import RandomCorruption

    image = np.zeros((32, 32, 3), np.uint8)
    image.setflags(write=False)  # as np.asarray(PIL image), e.g. a datasets row
    out = RandomCorruption(family="syn2nat", category=4, p=0.0, seed=0)(image, key=0)
    assert out is not image and out.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns "The given NumPy array is not writable"
        torch.from_numpy(out)


# ---------------------------------------------------------------------------- Q6, Q12: what verify must not pass
def _edit_manifest(root: Path, edit) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    edit(manifest)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))


def test_verify_recomputes_every_id(build_copy, capsys):
    _edit_manifest(build_copy, lambda m: m["plan"].update(seed=12345))  # plan_id and subset ids kept
    assert main(["verify", "--strict", str(build_copy)]) == 1
    out = capsys.readouterr().out
    assert "id mismatch: plan_id: recorded" in out and "id mismatch: subsets.solarize.id" in out
    assert "verify FAILED" in out and not corruptgen.verify(build_copy).ok


def test_a_manifest_from_a_newer_corruptgen_is_refused_and_kept(build_copy, capsys):
    def newer(m):
        m.update(corruptgen_manifest=2, fingerprints={"chunks": []})
        m["versions"]["corruptgen"] = "9.0.0"

    _edit_manifest(build_copy, newer)
    before = (build_copy / "manifest.json").read_bytes()
    err = one_line_error(capsys, ["verify", str(build_copy)])
    assert "was written by a newer corruptgen 9.0.0 (manifest format 2" in err and "upgrade corruptgen" in err
    err = one_line_error(capsys, ["build", "syn2nat", "--subsets", "solarize,posterize", "--limit", "2", "--out",
                                  str(build_copy.parent), "--no-progress"])  # fmt: skip
    assert "newer corruptgen" in err
    assert (build_copy / "manifest.json").read_bytes() == before
    _edit_manifest(build_copy, lambda m: m.update(corruptgen_manifest=1))  # same format, an unknown field
    with pytest.raises(CorruptgenError, match=r"newer corruptgen 9.0.0 \(fields fingerprints"):
        corruptgen.verify(build_copy)


# ---------------------------------------------------------------------------- O: start-up without torch
def test_listing_families_imports_neither_torch_nor_albumentations():
    code = (
        "import contextlib, io, sys\n"
        "import corruptgen.cli as cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert cli.main(['list']) == 0 and cli.main(['list', 'syn2nat']) == 0\n"
        "heavy = [m for m in ('torch', 'albumentations', 'scipy.ndimage', 'skimage.io') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("family, options", [
    ("opticsbench", {"subsets": "astigmatism_s1"}),
    ("adversarial", {"attacks": "fgsm:eps=0.04", "surrogate": "tiny_models:TinySurrogate", "labels": "ignore"}),
])  # fmt: skip
def test_unresized_inputs_reach_torch_without_a_warning(tmp_path, family, options):
    """``--preprocess none`` with inputs of two sizes: no batch, each decoded (read-only) image goes to torch alone;
    no "non-writable array" UserWarning may reach the user's terminal."""
    from PIL import Image

    (tmp_path / "in").mkdir()
    rng = np.random.default_rng(0)
    for name, shape in (("a", (40, 48, 3)), ("b", (30, 30, 3))):
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(tmp_path / "in" / f"{name}.png")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        result = corruptgen.build(family, source=f"imagefolder:{tmp_path / 'in'}", preprocess="none",
                                  out=tmp_path / "out", progress=False, **options)  # fmt: skip
    assert result.manifest["counts"]["samples"] == 4

"""The command line: every subcommand, exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from corruptgen.cli import main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "corruptgen", *args], capture_output=True, text=True, timeout=300)


def test_build_then_verify(tmp_path):
    r = run("build", "syn2nat", "--out", str(tmp_path), "--subsets", "solarize,posterize", "--limit", "4")
    assert r.returncode == 0, r.stderr
    assert "syn2nat: 3 subsets x 4 inputs -> 12 samples" in r.stdout and "skipped 0 of 4 inputs" in r.stdout
    r = run("verify", str(tmp_path / "syn2nat"))
    assert r.returncode == 0 and "verify OK: 3 shards checked" in r.stdout
    (tmp_path / "syn2nat/data/solarize/test-00000.tar").write_bytes(b"x")
    r = run("verify", str(tmp_path / "syn2nat"))
    assert r.returncode == 1 and "checksum mismatch: data/solarize/test-00000.tar" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "syn2nat", "--subsets", "solarise"], "unknown subset 'solarise' for syn2nat; did you mean solarize"),
        (["build", "imagenet-z"], "unknown benchmark 'imagenet-z'"),
        (["build", "syn2nat", "--source", "imagefolder:/no/such/dir"], "/no/such/dir"),
        (["build", "syn2nat", "--source", "ftp:foo"], "ftp:foo"),
        (["build", "syn2nat", "--quality", "0"], "--quality must be in 1..100"),
        (["build", "syn2nat", "--preprocess", "fancy"], "unknown preprocessing 'fancy'"),
        (["verify", "/no/such/build"], "no build directory"),
        (["select", "--n", "7", "--k", "1"], "n"),
        (["list", "nope"], "unknown benchmark 'nope'"),
    ],
)
def test_user_errors_are_one_line_exit_2(tmp_path, capsys, args, message):
    code = main([*args, "--out", str(tmp_path)] if args[0] == "build" else args)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("corruptgen: error: ") and err.count("\n") == 1 and message in err


def test_bad_option_values_exit_2():
    r = run("build", "syn2nat", "--workers", "0")
    assert r.returncode == 2 and "positive integer" in r.stderr and "Traceback" not in r.stderr
    r = run("build", "syn2nat", "--format", "gif")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_list(capsys):
    assert main(["list", "syn2nat"]) == 0
    out = capsys.readouterr().out
    assert "40 subsets" in out and "* random_sun_flare" in out and "1 heterogeneous" in out
    assert "  gauss_noise" in out and "unassigned" in out
    assert main(["list", "syn2nat", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 40 and sum(r["default"] for r in rows) == 18
    assert main(["list"]) == 0 and "syn2nat" in capsys.readouterr().out


def test_select(tmp_path, capsys):
    assert main(["select", "--n", "6", "--k", "3", "--count", "1000", "--seed", "0"]) == 0
    cap = capsys.readouterr()
    assert len(cap.out.strip().splitlines()) == 1 and "only 1 distinct" in cap.err
    assert main(["select", "--n", "2", "--k", "2", "--count", "5", "--out", str(tmp_path / "b.json")]) == 0
    data = json.loads((tmp_path / "b.json").read_text())
    assert len(data["benchmarks"]) == 5 and all(len(b) == 4 for b in data["benchmarks"])
    assert data["std"] == [0.0] * 5
    assert main(["select", "--n", "6", "--k", "2", "--count", "50", "--substitute"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert "0.6" in groups and all(len(b) == 12 for g in groups.values() for b in g)
    cats = tmp_path / "cats.json"
    cats.write_text(json.dumps({"a": ["blur", "median_blur", "motion_blur"], "b": ["rotate", "flip"], "c": ["border"]}))
    assert main(["select", "--n", "2", "--k", "2", "--count", "3", "--categories", str(cats)]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 3


def test_unwritable_output_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["build", "syn2nat", "--out", str(blocker / "sub"), "--limit", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("corruptgen: error: output path") and err.count("\n") == 1
    assert f"{blocker} is not a directory" in err  # a user error (exit 2), named before anything is written

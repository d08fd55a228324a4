"""Hostile builds opened by every command that reads a build: a 30000² and a 13000² image member (real PNGs), a 0-byte
image member, a 200 MB json member, a FIFO and a symbolic link in place of a shard. Each command exits 0 with what it
left out named and counted, or 2 with one line; never a traceback, a raw warning or a hang; no command decodes what it
refuses, and eval of the 30000² member peaks under 500 MB (decoding it would take 2.7 GB).

The commands run in one child process (imports paid once), each under an alarm, so a command that blocks (``open()``
of a FIFO) is interrupted and reported instead of hanging the suite. The unit tests below check the reader's rules
one by one."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
from hostile_builds import fifo_shard, replace_member, sparse_png, symlinked_shard, tar_of
from PIL import Image

from corruptgen.cli import main
from corruptgen.engine.reader import Build
from corruptgen.errors import CorruptgenError
from corruptgen.io.regular import NotRegularError, open_regular, refusal
from corruptgen.io.tarread import MAX_JSON_BYTES, Limits, ShardError, iter_samples, oversized, read_members

TESTS = Path(__file__).parent
BUILD = ["imagenet-c", "--subsets", "frost", "--severities", "1", "--limit", "2"]
CLEAN, FROST = "data/clean/test-00000.tar", "data/frost_s1/test-00000.tar"
PEAK_MB = 500


def _commands(build: Path) -> dict[str, list[str]]:
    """Every command that reads a build, on ``build`` (outputs beside it)."""
    side = build.parent
    return {
        "eval": ["eval", str(build), "--model", "tiny_models:TinySurrogate", "--out", str(side / "ev"),
                 "--no-progress", "--no-report"],
        "gallery": ["gallery", str(build), "--out", str(side / "gal"), "--no-progress"],
        "export": ["export", str(build), "--out", str(side / "ex"), "--no-progress"],
        "export-cifar-c": ["export", str(build), "--layout", "cifar-c", "--out", str(side / "exc"), "--no-progress"],
        "card": ["card", str(build), "--print"],
        "push": ["push", str(build), "user/name", "--dry-run"],
        "coverage": ["coverage", str(build), "--no-plot"],
        "verify": ["verify", str(build)],
        "resume": ["build", *BUILD, "--out", str(side), "--no-progress"],
    }  # fmt: skip


_DRIVER = r"""
import contextlib, io, json, resource, signal, sys, time, traceback
from corruptgen.cli import main

class Hang(Exception):
    pass

def alarm(*_):
    raise Hang

def peak_mb():
    # this process's own peak resident memory: VmHWM belongs to its address space, while ru_maxrss also counts the
    # parent's memory when the parent forked it (Linux keeps the pre-exec high-water mark)
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024

signal.signal(signal.SIGALRM, alarm)
for case, name, argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    start, before = time.monotonic(), peak_mb()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        signal.alarm(60)
        try:
            rc = main(argv)
        except Hang:
            rc = "hang"
        except SystemExit as e:
            rc = e.code
        except BaseException:
            rc = "traceback"
            err.write(traceback.format_exc())
        finally:
            signal.alarm(0)
    peak = peak_mb()
    print(json.dumps({"case": case, "command": name, "rc": rc, "out": out.getvalue()[-3000:], "err": err.getvalue(),
                      "seconds": round(time.monotonic() - start, 1), "peak_mb": peak, "grew_mb": peak - before}),
          flush=True)
"""


def _hostile(build: Path) -> dict[str, Path]:
    """One copy of ``build`` per hostile case, its manifest recording the new bytes (as a hostile author would)."""
    work = build.parent.parent / "cases"
    cases = {
        "as-built": lambda b: None,
        "30000-square": lambda b: replace_member(b, CLEAN, ".jpg", sparse_png(30000)),
        "13000-square": lambda b: replace_member(b, FROST, ".jpg", sparse_png(13000)),
        "empty-image": lambda b: replace_member(b, FROST, ".jpg", b""),
        "200MB-json": lambda b: replace_member(b, FROST, ".json", 200 * 2**20),  # sparse: no disk for its zeros
        "fifo-shard": lambda b: fifo_shard(b, FROST),
        "symlinked-shard": lambda b: symlinked_shard(b, FROST, b.parent / "elsewhere"),
    }
    copies = {}
    for case, make in cases.items():
        copy = work / case / "imagenet-c"
        shutil.copytree(build, copy)
        make(copy)
        copies[case] = copy
    return copies


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "built"
    assert main(["build", *BUILD, "--out", str(out), "--no-progress"]) == 0
    return out / "imagenet-c"


@pytest.fixture(scope="module")
def runs(tiny, tmp_path_factory) -> dict[tuple[str, str], dict]:
    """Every command on a copy of the build as built (which also loads what each command imports), then on every
    hostile copy, in one child process; ``{(case, command): result}``."""
    copies = _hostile(tiny)  # "as-built" first
    plan = [(case, name, argv) for case, copy in copies.items() for name, argv in _commands(copy).items()]
    home = tmp_path_factory.mktemp("hf_home")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(plan)], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tiny.parent)  # fmt: skip
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and len(results) == len(plan), proc.stderr[-3000:]
    return {(r["case"], r["command"]): r for r in results}


CASES = ("30000-square", "13000-square", "empty-image", "200MB-json", "fifo-shard", "symlinked-shard")
COMMANDS = ("eval", "gallery", "export", "export-cifar-c", "card", "push", "coverage", "verify", "resume")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
def test_every_reading_command_skips_and_counts_or_stops_in_one_line(runs, case, command):
    r = runs[(case, command)]
    assert r["rc"] in (0, 1, 2), f"{case} / {command}: {r['rc']} after {r['seconds']} s\n{r['err'][-2000:]}"
    assert "Traceback" not in r["err"] and "Warning" not in r["err"], r["err"][-2000:]
    lines = [line for line in r["err"].splitlines() if line.startswith("corruptgen: error:")]
    if r["rc"] == 2:
        assert len(lines) == 1 and r["err"].count("\n") == 1, r["err"]
    else:
        assert not lines, r["err"]


def test_every_command_reads_the_build_as_built(runs):
    failed = {name: r["err"][-500:] for (case, name), r in runs.items() if case == "as-built" and r["rc"] != 0}
    assert not failed


def test_what_each_command_says(runs):
    said = {key: r["out"] + r["err"] for key, r in runs.items()}
    big = "30000x30000 pixels > the build's limit of 100000000 (its --max-pixels): not decoded"
    assert big in said[("30000-square", "eval")] and runs[("30000-square", "eval")]["rc"] == 2
    for command in ("gallery", "card", "push", "coverage"):
        told = f"skipped 1 sample of the build that cannot be read safely (clean/astronaut: jpg image: {big})"
        assert told in said[("30000-square", command)], command
    assert f"skipped 1 sample: jpg image: {big}" in said[("30000-square", "export")]
    assert "13000x13000 pixels" in said[("13000-square", "gallery")]
    assert "cannot decode image astronaut (frost_s1): empty file (0 bytes)" in said[("empty-image", "eval")]
    for command in ("gallery", "card", "coverage"):
        assert "frost_s1/astronaut: jpg image: empty file (0 bytes)" in said[("empty-image", command)], command
    assert "skipped 1 sample: jpg image: empty file (0 bytes)" in said[("empty-image", "export")]  # was copied
    json_refused = f"json member declares {200 * 2**20} bytes > the limit of {MAX_JSON_BYTES} bytes"
    for command in ("eval", "gallery", "export", "card", "push"):
        assert json_refused in said[("200MB-json", command)], command
    for command in ("eval", "gallery", "card", "push"):
        text = said[("fifo-shard", command)]
        assert FROST in text and "is a FIFO, not a regular file: not opened" in text, command
    assert "1 not a regular file" in said[("fifo-shard", "verify")] and runs[("fifo-shard", "verify")]["rc"] == 1
    for command in ("gallery", "card", "verify", "eval"):
        assert "is a symbolic link (to " in said[("symlinked-shard", command)], command
    assert runs[("symlinked-shard", "push")]["rc"] == 2  # never uploads a file from outside the build


def test_resume_renders_a_shard_that_is_a_fifo_or_a_link_again(runs, tiny):
    cases = tiny.parent.parent / "cases"
    for case in ("fifo-shard", "symlinked-shard"):
        shard = cases / case / "imagenet-c" / FROST
        assert runs[(case, "resume")]["rc"] == 0 and not shard.is_symlink() and shard.is_file()
        assert shard.read_bytes() == (tiny / FROST).read_bytes()
    moved = cases / "symlinked-shard" / "elsewhere" / "test-00000.tar"
    assert moved.read_bytes() == (tiny / FROST).read_bytes()  # the link's target is left alone


def test_no_command_decodes_what_it_refuses(runs):
    """The process's high-water mark grows by less than 150 MB in any command: decoding the 30000² member would add
    2.7 GB (RGB), the 13000² one 500 MB, reading the json member 200 MB."""
    grew = {key: r["grew_mb"] for key, r in runs.items() if r["grew_mb"] >= 150 and key[0] != "as-built"}
    assert not grew


def test_eval_of_a_30000_square_member_peaks_under_500_mb(runs, tiny):
    """In a fresh process (eval is the heaviest reader: torch, datasets and OpenCV alone take ~430 MB here)."""
    build = tiny.parent.parent / "cases" / "30000-square" / "imagenet-c"
    code = "import sys\nfrom corruptgen.cli import main\nrc = main(sys.argv[1:])\n" \
           "print(next(int(l.split()[1]) // 1024 for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n" \
           "sys.exit(rc)"  # fmt: skip  # VmHWM: this process's own peak (ru_maxrss counts a forking parent's too)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code, *_commands(build)["eval"]], capture_output=True, text=True,
                          timeout=300, env=env, cwd=build.parent)  # fmt: skip
    assert proc.returncode == 2 and "30000x30000 pixels > the build's limit" in proc.stderr, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) < PEAK_MB, proc.stdout[-500:]


def test_no_command_takes_long(runs):
    slow = {key: r["seconds"] for key, r in runs.items() if r["seconds"] > 30}
    assert not slow


# ---------------------------------------------------------------------------------------------- the reader's rules
def _png(side: int = 8) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((side, side, 3), 90, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def test_members_over_their_caps_are_refused_from_the_header_before_reading(tmp_path):
    shard = tmp_path / "s.tar"
    meta = json.dumps({"pad": "x" * 2000}).encode()
    shard.write_bytes(tar_of([("a.png", _png()), ("a.json", meta), ("b.png", _png()), ("b.json", b"{}")]))
    refused: list[tuple[str, str]] = []
    small = Limits(max_json_bytes=1000)
    got = list(iter_samples(shard, lambda f: True, limits=small, refused=lambda k, why: refused.append((k, why))))
    assert [k for k, _ in got] == ["b"] and refused[0][0] == "a"
    assert refused[0][1].startswith(f"json member declares {len(meta)} bytes > the limit of 1000 bytes")
    assert [name for name, _ in oversized(shard, small)] == ["a.json"] and not list(oversized(shard))
    with pytest.raises(ShardError, match="sample a: json member declares"):
        list(iter_samples(shard, lambda f: True, limits=small))  # nobody to tell: one line
    # a member declaring more bytes than the file holds: refused by its declared size, never read
    header = tarfile.TarInfo("c.json")
    header.size = 10 * MAX_JSON_BYTES
    (tmp_path / "cut.tar").write_bytes(header.tobuf(format=tarfile.USTAR_FORMAT) + b"{}")
    seen: list[str] = []
    list(iter_samples(tmp_path / "cut.tar", lambda f: True, refused=lambda k, why: seen.append(why)))
    assert seen == [f"json member declares {10 * MAX_JSON_BYTES} bytes > the limit of {MAX_JSON_BYTES} bytes for a "
                    "json/text member: not read"]  # fmt: skip


def test_image_members_are_checked_by_their_header_against_the_build_limit(tmp_path):
    shard = tmp_path / "s.tar"
    shard.write_bytes(tar_of([("big.png", sparse_png(30000)), ("empty.png", b""), ("text.png", b"not a png"),
                              ("ok.png", _png())]))  # fmt: skip
    refused: dict[str, str] = {}
    kept = list(iter_samples(shard, lambda f: True, refused=lambda k, why: refused.setdefault(k, why)))
    assert [k for k, _ in kept] == ["ok"]
    assert refused == {
        "big": "png image: 30000x30000 pixels > the build's limit of 100000000 (its --max-pixels): not decoded",
        "empty": "png image: empty file (0 bytes)",
        "text": "png image: not a recognised image format (9 bytes)",
    }
    assert list(iter_samples(shard, lambda f: f == "json"))  # images not wanted: not read, not checked
    assert read_members(shard, {"ok.png"}) == {"ok.png": _png()}
    limits = Limits.of({"plan": {"max_pixels": 30000 * 30000}})
    assert limits.max_pixels == 9 * 10**8 and limits.max_bytes == 36 * 10**8
    assert set(read_members(shard, {"big.png"}, limits=limits)) == {"big.png"}
    assert Limits.of({"plan": {"max_pixels": True}}) == Limits() == Limits.of(None)


def test_only_regular_files_are_opened(tmp_path):
    regular = tmp_path / "s.tar"
    regular.write_bytes(tar_of([("a.json", b"{}")]))
    os.mkfifo(tmp_path / "fifo.tar")
    (tmp_path / "link.tar").symlink_to(regular)
    (tmp_path / "dir.tar").mkdir()
    assert refusal(regular) is None
    assert refusal(tmp_path / "fifo.tar") == "is a FIFO, not a regular file: not opened"
    assert refusal(tmp_path / "link.tar").startswith(f"is a symbolic link (to {regular})")
    assert refusal(tmp_path / "dir.tar") == "is a directory, not a regular file: not opened"
    assert refusal("/dev/zero") == "is a character device, not a regular file: not opened"
    for name in ("fifo.tar", "link.tar", "dir.tar"):
        with pytest.raises(NotRegularError):
            open_regular(tmp_path / name)
        with pytest.raises(ShardError, match=f"shard {tmp_path / name}: is "):
            list(iter_samples(tmp_path / name))
    with pytest.raises(ShardError, match="not a readable tar archive"):
        (tmp_path / "junk.tar").write_bytes(b"x" * 700)
        list(iter_samples(tmp_path / "junk.tar"))


def test_a_build_reached_through_a_symlinked_folder_is_read(tiny, tmp_path):
    """Links are refused in place of the files a build holds, not above them (``~/data -> /mnt/big``)."""
    (tmp_path / "link").symlink_to(tiny.parent, target_is_directory=True)
    build = Build.open(tmp_path / "link" / "imagenet-c")
    assert len(list(build.iter_samples("frost_s1"))) == 2 and not build.refused


def test_the_manifest_is_opened_only_as_a_regular_file(tiny, tmp_path):
    copy = tmp_path / "imagenet-c"
    shutil.copytree(tiny, copy)
    (copy / "manifest.json").unlink()
    os.mkfifo(copy / "manifest.json")
    with pytest.raises(CorruptgenError, match=r"manifest\.json is a FIFO, not a regular file"):
        Build.open(copy)


def test_the_gallery_page_embeds_a_large_sample_json_in_part(tiny, tmp_path, capsys):
    copy = tmp_path / "imagenet-c"
    shutil.copytree(tiny, copy)
    with tarfile.open(copy / FROST) as tar:
        meta = json.loads(tar.extractfile("astronaut.json").read())
    replace_member(copy, FROST, "astronaut.json", json.dumps({**meta, "pad": "x" * 900_000}).encode())
    assert main(["gallery", str(copy), "--out", str(tmp_path / "site"), "--no-verify", "--no-progress"]) == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert len(page) < 200_000 and "1 entries over 1 KiB of a 9" in page and meta["source_id"] in page
    capsys.readouterr()

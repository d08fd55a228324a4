"""What corruptgen writes into a build someone else made never goes through a link or into a FIFO there, and a
manifest far bigger than any corruptgen writes is refused in one line instead of parsed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import corruptgen
from corruptgen.cli import main
from corruptgen.engine import manifest as manifest_module
from corruptgen.io.atomic import partial_path, write_atomic


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b")
    corruptgen.build("syn2nat", out=out, subsets="solarize", limit=1, card=False, progress=False)
    return out / "syn2nat"


def test_a_card_replaces_a_linked_readme_instead_of_writing_through_it(build, tmp_path, capsys):
    outside = tmp_path / "outside.md"
    outside.write_text("not yours\n")
    readme = build / "README.md"
    readme.unlink(missing_ok=True)
    readme.symlink_to(outside)
    assert main(["card", str(build), "--no-images"]) == 0
    assert outside.read_text() == "not yours\n"
    assert readme.is_file() and not readme.is_symlink() and "solarize" in readme.read_text()


def test_write_atomic_never_opens_a_fifo_planted_under_its_hidden_name(tmp_path):
    target = tmp_path / "file.bin"
    os.mkfifo(partial_path(target))  # opening it for writing would block until a reader came
    write_atomic(target, b"abc")
    assert target.read_bytes() == b"abc" and not partial_path(target).exists()


def test_a_manifest_over_the_cap_is_refused_in_one_line(build, monkeypatch, capsys):
    monkeypatch.setattr(manifest_module, "MAX_MANIFEST_BYTES", 64)
    assert main(["verify", str(build)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "over 0 MiB: not a corruptgen manifest" in err[0], err

"""Every code block of docs/export.md runs, in order, in a folder holding an ImageNet-like ``imagenet/val`` of real
photos and a RobustBench-format ``imagenet_test_image_ids.txt``; the layout recipe of docs/contributing.md registers
a layout that exports a fresh build."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
from export_helpers import shard_images, write_imagenet_like

from corruptgen.cli import main
from corruptgen.export import LAYOUTS, export_build

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def code_blocks(text: str, heading: str | None = None) -> list[tuple[str, str, int]]:
    """(language, code, line) of the fenced blocks (of the section ``heading`` when given)."""
    if heading is not None:
        text = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [(m[1], m[2], text[: m.start()].count("\n") + 1) for m in _BLOCK.finditer(text)]


def run_bash(code: str, where: str) -> None:
    """Each command (backslash continuations joined) must be a ``corruptgen`` command that exits 0."""
    for command in code.replace("\\\n", " ").splitlines():
        argv = shlex.split(command, comments=True)
        if not argv:
            continue
        assert argv[0] == "corruptgen", f"{where}: only corruptgen commands are run by this test: {command}"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(argv[1:])
        assert rc == 0, f"{where}: {command} exited {rc}\n{out.getvalue()}"


def run_blocks(blocks: list[tuple[str, str, int]], name: str) -> None:
    for lang, code, line in blocks:
        where = f"{name}:{line}"
        if lang == "bash":
            run_bash(code, where)
        else:
            assert lang == "python", where
            exec(compile(code, where, "exec"), {"__name__": "__docs__"})


@pytest.fixture
def imagenet_here(tmp_path, monkeypatch) -> list[str]:
    """cwd = a folder with ``imagenet/val/<wnid>/ILSVRC2012_val_*.JPEG`` and ``imagenet_test_image_ids.txt``."""
    rels = write_imagenet_like(tmp_path / "imagenet" / "val")
    (tmp_path / "imagenet_test_image_ids.txt").write_text("".join(f"{r}\n" for r in rels[::-1]))
    monkeypatch.chdir(tmp_path)
    return rels


def test_export_md_blocks_run(imagenet_here, hf_cache):
    rels = imagenet_here
    blocks = code_blocks((DOCS / "export.md").read_text())
    assert [lang for lang, _, _ in blocks].count("python") >= 4 and len(blocks) >= 7
    run_blocks(blocks, "docs/export.md")
    ic, ob = Path("data/ImageNet-C"), Path("data/OpticsBench")
    assert len(list((ic / "gaussian_noise" / "5").rglob("*.JPEG"))) == len(rels)
    for path in (ob / "clean").rglob("*.JPEG"):  # the --link-dest block: clean images are shared, not copied
        assert path.stat().st_ino == (ic / path.relative_to(ob)).stat().st_ino
    assert len(list((ob / "clean").rglob("*.JPEG"))) == len(rels)


@pytest.fixture
def recipe_layout():
    yield
    LAYOUTS._entries.pop("flat", None)  # the registry has no unregister: tests clean up what they add


def test_contributing_layout_recipe_exports_a_build(icb, tmp_path, recipe_layout):
    blocks = code_blocks((DOCS / "contributing.md").read_text(), "Add an export layout")
    assert len(blocks) == 1 and blocks[0][0] == "python"
    exec(compile(blocks[0][1], "docs/contributing.md", "exec"), {"__name__": "recipe"})
    report = export_build(icb, tmp_path / "flat", layout="flat", subsets="contrast_s2", options={"sep": ";"})
    shards = shard_images(icb, "contrast_s2")
    assert report.files == {"written": len(shards) + 1}
    for key, (_, data) in shards.items():
        assert (tmp_path / "flat" / "contrast_s2" / f"{key}.JPEG").read_bytes() == data
    rows = (tmp_path / "flat" / "contrast_s2" / "labels.csv").read_text().splitlines()
    assert rows[0] == "key;label" and "chelsea;281" in rows and "astronaut;" in rows

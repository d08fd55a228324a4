"""Every code block of README.md and docs/*.md runs, in order, on a fresh build, with the user's own tools
(``datasets``, ``webdataset`` + a DataLoader with workers, plain folders): see ``tests/docs/runner.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNNER = REPO / "tests" / "docs" / "runner.py"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
sys.path.insert(0, str(REPO / "tests" / "docs"))
from runner import blocks  # noqa: E402


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_block_of_the_page_runs(page, tmp_path):
    text = page.read_text()
    if not blocks(text):
        pytest.skip("no code block")
    tested_by = re.search(r"<!--\s*docs-test:\s*tested-by\s+(\S+)\s*-->", text)
    if tested_by:  # a page whose blocks need more than a run (e.g. bytes compared): its own test runs them
        assert (REPO / tested_by.group(1)).is_file(), tested_by.group(1)
        pytest.skip(f"run by {tested_by.group(1)}")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    result = subprocess.run([sys.executable, str(RUNNER), str(page), str(tmp_path / "work")],
                            env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]


def test_the_runner_runs_bash_and_shared_python_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("x\n```bash\necho hi > f.txt\n```\n```text\nnot run\n```\n"
                    "```python\nx = open('f.txt').read()\n```\n```python\nassert x == 'hi\\n'\n```\n"
                    "```python\nraise SystemExit(3)\n```\n")  # fmt: skip
    result = subprocess.run([sys.executable, str(RUNNER), str(page), str(tmp_path / "w")],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 3 and (tmp_path / "w" / "f.txt").read_text() == "hi\n"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_relative_link_resolves(page):
    """Links to other pages and files of the repository point at something that exists (anchors ignored)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken

"""Helpers the benchmark scripts share: the page regions they write, the machine they ran on, a baseline tree.

* :func:`write_region` / :func:`read_region`: the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
  in a Markdown page (the scripts write their tables there; ``tests/test_bench_docs.py`` checks that each region
  equals the table of its saved JSON);
* :func:`machine`: CPU model, cores, the instruction-set flags that decide the kernels, load average and date;
* :func:`export_tree`: a git ref's package as an importable folder (``git archive``), the "before" of a measurement;
* :func:`child_env`: the environment of a measured child process (one BLAS/OpenMP thread, a baseline tree first).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f")


def _markers(name: str, tag: str) -> tuple[str, str]:
    return f"<!-- {tag}:{name} -->", f"<!-- /{tag}:{name} -->"


def write_region(doc: Path, name: str, text: str, tag: str = "bench") -> None:
    """Replace what stands between ``<!-- TAG:NAME -->`` and ``<!-- /TAG:NAME -->`` in ``doc`` (the peer tables'
    regions are tagged ``bench_peers``, the other scripts' ``bench``)."""
    begin, end = _markers(name, tag)
    page = doc.read_text()
    if begin not in page or end not in page:
        raise SystemExit(f"{doc}: no region {begin} … {end}")
    head, rest = page.split(begin, 1)
    doc.write_text(f"{head}{begin}\n{text}\n{end}{rest.split(end, 1)[1]}")


def read_region(page: str, name: str, tag: str = "bench") -> str | None:
    """The text of region ``name`` in ``page`` (``None`` when the page has no such region)."""
    begin, end = _markers(name, tag)
    match = re.search(re.escape(begin) + r"\n(.*?)\n" + re.escape(end), page, re.DOTALL)
    return match.group(1) if match else None


def machine(load: list[float]) -> dict:
    """The machine a measurement ran on: CPU model, cores, instruction-set flags, load averages given, date."""
    cpu, flags = "unknown", []
    try:
        text = Path("/proc/cpuinfo").read_text()
        cpu = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name"))
        found = next(line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags"))
        flags = [f for f in FLAGS if f in found]
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "flags": flags, "load_1min": [round(x, 2) for x in load],
            "date": time.strftime("%Y-%m-%d")}  # fmt: skip


def describe_machine(m: dict) -> str:
    """One line: CPU, cores, flags, load average at start → end, date."""
    return (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores ({', '.join(m.get('flags', []))}), load average "
            f"{' → '.join(map(str, m.get('load_1min', [])))} (start → end), {m.get('date', '')}")  # fmt: skip


def export_tree(ref: str, dest: Path) -> Path:
    """``ref``'s package as an importable folder (put it first on ``PYTHONPATH``): ``corruptgen/`` with ``cards/``
    and ``kernels/`` inside it, as an installed package has them."""
    archive = dest / "src.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "corruptgen", "cards", "kernels"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest / "src", filter="data")
    pkg = dest / "src" / "corruptgen"
    for folder in ("cards", "kernels"):
        (dest / "src" / folder).rename(pkg / folder)
    return dest / "src"


def child_env(tree: Path | None = None) -> dict[str, str]:
    """The environment of a measured child process: one BLAS/OpenMP thread (``corruptgen.bench.timing.THREAD_ENV``)
    and, given ``tree`` (an :func:`export_tree` folder), that package first on ``PYTHONPATH``."""
    from corruptgen.bench.timing import THREAD_ENV

    env = {**os.environ, **{name: "1" for name in THREAD_ENV}}
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)
    return env


def publish(result: dict, text: str, region: str, out: str | None, docs: str | None) -> None:
    """Print a script's region ``text``; save ``result`` as JSON to ``out`` and write ``text`` into the region of each
    comma-separated page of ``docs`` (paths relative to the repository root or absolute)."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1) + "\n")
    print(text)
    for page in (docs or "").split(","):
        if page:
            write_region(Path(page) if Path(page).is_absolute() else ROOT / page, region, text)

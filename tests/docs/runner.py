"""Run every fenced ``bash``/``python`` block of a Markdown file, in order, as a user would.

``python tests/docs/runner.py FILE WORKDIR`` runs the blocks in ``WORKDIR``: bash blocks with ``bash -euo pipefail``,
python blocks in one namespace shared by the file's python blocks (a later block may use names an earlier one
defined). Other fences (``text``, ``yaml``, ``json``, ...) are output or data and are not run. HTML comments steer the
run without changing what a reader sees:

* ``<!-- docs-test: setup NAME ... -->`` (anywhere): prepare fixtures in WORKDIR first (see ``FIXTURES``) — the
  user's own data a page assumes (an ImageNet-style ``val/`` folder of photos, ...).
* ``<!-- docs-test: installed -->`` (before a block): drop ``bash scripts/install.sh [...] &&`` from its lines and
  drop the line ``python -m pytest -q`` (the test already runs in the installed environment, inside that very
  command: CI runs both itself).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->", re.DOTALL)
RUN = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}


def blocks(text: str) -> list[tuple[str, str, int, list[str]]]:
    """(kind, code, line, directives just before it) of each runnable block."""
    out = []
    last = 0
    for m in _FENCE.finditer(text):
        kind = RUN.get(m.group(1).lower())
        between = text[last : m.start()]
        last = m.end()
        if kind is None:
            continue
        out.append((kind, m.group(2), text[: m.start()].count("\n") + 1, _DIRECTIVE.findall(between)))
    return out


def file_fixtures(text: str) -> list[str]:
    return [name for d in _DIRECTIVE.findall(text) if d.startswith("setup ") for name in d.split()[1:]]


# ------------------------------------------------------------------------------------------------ fixtures
def _imagenet_val(work: Path) -> None:
    """``val/<wnid>/<name>.JPEG``: the labelled sample photos as an ImageNet validation folder."""
    import skimage.data
    from PIL import Image

    photos = {"n02123045": ["chelsea"], "n07920052": ["coffee"], "n04252225": ["rocket"],
              "n03790512": ["stereo_motorcycle"], "n03196217": ["clock"]}  # fmt: skip
    for wnid, names in photos.items():
        for name in names:
            image = getattr(skimage.data, name)()
            image = image[0] if isinstance(image, tuple) else image
            path = work / "val" / wnid / f"{name}.JPEG"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(image).convert("RGB").save(path, quality=95)


def _photos(work: Path) -> None:
    """``photos/``: a flat folder of the ten sample photos (no labels)."""
    from corruptgen.io.sources import open_source

    source = open_source("samples")
    (work / "photos").mkdir(exist_ok=True)
    for i, item in enumerate(source.items()):
        (work / "photos" / f"{item.key}.png").write_bytes(source.read(i))


def _hf_dataset(work: Path) -> None:
    """``my-dataset/``: a ``datasets`` dataset (image + ClassLabel) saved with ``save_to_disk``."""
    import datasets
    import skimage.data

    names = ["chelsea", "coffee", "rocket", "astronaut"]
    images = [getattr(skimage.data, n)() for n in names]
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=names)})
    ds = datasets.Dataset.from_dict({"image": images, "label": list(range(len(names)))}, features=features)
    ds.save_to_disk(str(work / "my-dataset"))


def _wds_tars(work: Path) -> None:
    """``clean-000.tar``, ``clean-001.tar``: WebDataset shards of clean photos with ``.cls`` labels."""
    import io
    import tarfile

    import skimage.data
    from PIL import Image

    photos = [("chelsea", 281), ("coffee", 967), ("rocket", 657), ("astronaut", -1)]
    for shard in range(2):
        with tarfile.open(work / f"clean-{shard:03d}.tar", "w") as tar:
            for name, label in photos[shard * 2 : shard * 2 + 2]:
                buf = io.BytesIO()
                Image.fromarray(getattr(skimage.data, name)()).save(buf, format="JPEG", quality=95)
                for ext, data in (("jpg", buf.getvalue()), ("cls", str(label).encode())):
                    info = tarfile.TarInfo(f"{name}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))


def _cifar_npy(work: Path) -> None:
    """``images.npy``, ``labels.npy``: CIFAR-style arrays (32×32 crops of the sample photos, CIFAR-10 class indices)."""
    import numpy as np
    import skimage.data

    photos = [skimage.data.chelsea(), skimage.data.coffee(), skimage.data.rocket(), skimage.data.astronaut()]
    np.save(work / "images.npy", np.stack([np.ascontiguousarray(p[100:228:4, 100:228:4, :3]) for p in photos]))
    np.save(work / "labels.npy", np.array([3, 4, 0, 6]))  # cat, deer, airplane, frog: CIFAR-10's order


def _imagenet_list(work: Path) -> None:
    """``imagenet/val/<wnid>/ILSVRC2012_val_*.JPEG`` and a RobustBench-format ``imagenet_test_image_ids.txt``."""
    sys.path.insert(0, str(REPO / "tests" / "export"))
    from export_helpers import write_imagenet_like

    rels = write_imagenet_like(work / "imagenet" / "val")
    (work / "imagenet_test_image_ids.txt").write_text("".join(f"{r}\n" for r in rels))


FIXTURES = {
    "imagenet-val": _imagenet_val,
    "imagenet-list": _imagenet_list,
    "photos": _photos,
    "hf-dataset": _hf_dataset,
    "wds-tars": _wds_tars,
    "cifar-npy": _cifar_npy,
}


# ------------------------------------------------------------------------------------------------ running
def run_file(md: Path, work: Path) -> None:
    text = md.read_text()
    for name in file_fixtures(text):
        FIXTURES[name](work)
    namespace: dict = {"__name__": "__main__"}
    os.chdir(work)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for kind, code, line, directives in blocks(text):
        where = f"{md.relative_to(REPO) if md.is_relative_to(REPO) else md}:{line}"
        if "installed" in directives:
            code = re.sub(r"bash scripts/install\.sh(?: \w+)? && ", "", code)
            code = re.sub(r"(?m)^python -m pytest -q\s*$", "", code)
        print(f"--- {where} ({kind})", flush=True)
        start = time.perf_counter()
        if kind == "bash":
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env)
            if result.returncode != 0:
                sys.exit(f"{where}: bash block exited {result.returncode}:\n{code}")
        else:
            exec(compile(code, where, "exec"), namespace)
        print(f"--- {where}: {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    work = Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    if shutil.which("corruptgen") is None:
        sys.exit("the corruptgen command is not on PATH (install the package first)")
    run_file(Path(sys.argv[1]).resolve(), work)

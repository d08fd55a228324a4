"""What is published never names a local folder: a build from a source under a folder with a marker name (the home
directory here) is searched for the marker and for the test's own absolute folder in every file of the build (every
member of every shard, the manifest `push` uploads, the card), the gallery and the eval results."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.eval import evaluate
from corruptgen.io.shown import scrub, shown_path, shown_pattern, without_credentials
from corruptgen.io.sources import recorded_spec

MARKER = "MARKER_home_user_x"
COLOURS = ((200, 40, 40), (40, 200, 40), (40, 40, 200))


def _png(i: int) -> bytes:
    out = io.BytesIO()
    array = np.full((24, 24, 3), COLOURS[i % 3], np.uint8)
    array[: 4 + 3 * i] = 255  # each image its own
    Image.fromarray(array).save(out, format="PNG")
    return out.getvalue()


def _folder(root: Path) -> Path:
    """cat/ and dog/ with two photos between them and a file that is not an image."""
    for i, (cls, name) in enumerate((("cat", "a"), ("dog", "b"))):
        (root / cls).mkdir(parents=True, exist_ok=True)
        (root / cls / f"{name}.png").write_bytes(_png(i))
    (root / "cat" / "broken.png").write_bytes(b"not an image")
    return root


def _source(kind: str, home: Path) -> tuple[str, str]:
    """A source of ``kind`` under ``home`` (given by its absolute path) and the spec the build records."""
    if kind == "imagefolder":
        return f"imagefolder:{_folder(home / 'data')}", "imagefolder:data"
    if kind == "filelist":
        data = _folder(home / "data")
        (home / "lists").mkdir()
        lines = ["cat/a.png", "dog/b.png", "cat/broken.png", "cat/missing.png", str(data / "cat" / "a.png")]
        (home / "lists" / "val.txt").write_text("\n".join(lines) + "\n")
        return f"filelist:{home / 'lists' / 'val.txt'}:{data}", "filelist:val.txt:data"
    if kind == "npy":
        (home / "arrays").mkdir(parents=True)
        images = np.stack([np.asarray(Image.open(io.BytesIO(_png(i)))) for i in range(3)])
        np.save(home / "arrays" / "images.npy", images)
        np.save(home / "arrays" / "labels.npy", np.array([0, 1, 2]))
        return f"npy:{home / 'arrays' / 'images.npy'}:{home / 'arrays' / 'labels.npy'}", "npy:images.npy:labels.npy"
    if kind == "hf":
        import datasets

        features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["a", "b"])})
        rows = [{"bytes": _png(0), "path": None}, {"bytes": _png(1), "path": None},
                {"bytes": b"not an image", "path": str(home / "gone" / "c.png")}]  # fmt: skip
        table = datasets.Dataset.from_dict({"image": rows, "label": [0, 1, 0]}, features=features)
        table.save_to_disk(str(home / "ds"))
        return f"hf:{home / 'ds'}", "hf:ds"
    if kind == "webdataset":
        (home / "shards").mkdir(parents=True)
        with tarfile.open(home / "shards" / "clean-000.tar", "w") as tar:
            for key, data in (("s0", _png(0)), ("s1", _png(1)), ("s2", b"not an image")):
                for name, payload in ((f"{key}.png", data), (f"{key}.cls", b"1")):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        return f"webdataset:{home}/shards/clean-{{000..000}}.tar", "webdataset:clean-{000..000}.tar"
    raise AssertionError(kind)


def _texts(path: Path) -> list[tuple[str, bytes]]:
    """Every file under ``path`` as ``(name, bytes)``: each shard's members (names too), parquet files as text."""
    out = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        if file.suffix == ".tar":
            with tarfile.open(file) as tar:
                out += [(f"{file}/{m.name}", m.name.encode() + tar.extractfile(m).read()) for m in tar.getmembers()]
        elif file.suffix == ".parquet":
            import pyarrow.parquet as pq

            out.append((str(file), str(pq.read_table(file).to_pylist()).encode()))
        else:
            out.append((str(file), file.read_bytes()))
    return out


def _model():
    import torch

    from corruptgen.models.loading import EvalModel

    net = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(3, 1000))
    return EvalModel(name="tiny", spec="tiny", forward=net, module=net, input_size=16, mean=(0.5,) * 3, std=(0.5,) * 3,
                     num_classes=1000)  # fmt: skip


@pytest.mark.parametrize("kind", ["imagefolder", "filelist", "npy", "hf", "webdataset"])
def test_build_card_gallery_and_results_never_name_the_source_folder(kind, tmp_path, monkeypatch, hf_cache):
    home, work = tmp_path / MARKER, tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the source lies in the home directory, the command runs elsewhere
    monkeypatch.chdir(work)
    spec, recorded = _source(kind, home)
    argv = ["build", "imagenet-c", "--source", spec, "--subsets", "gaussian_noise", "--severities", "1", "--size",
            "32", "--out", str(work / "out"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    build = work / "out" / "imagenet-c"
    manifest = json.loads((build / "manifest.json").read_text())
    assert manifest["plan"]["source"]["spec"] == manifest["source"]["spec"] == recorded
    assert manifest["invocation"]["arguments"]["source"] == recorded
    skipped = {"filelist": 3, "npy": 0}.get(kind, 1)  # reasons recorded (an array source has no bad file)
    assert manifest["counts"]["skipped_inputs"] == skipped
    assert main(argv) == 0  # the same command again: the same build, nothing rendered
    assert json.loads((build / "manifest.json").read_text())["plan_id"] == manifest["plan_id"]

    run = evaluate(str(build), [_model()], out=work / "res", labels="ignore", report=False)
    assert run.results[0]["data"]["location"] == "out/imagenet-c"
    site = corruptgen.gallery(str(build), work / "site", results=[work / "res" / "results-tiny.json"]).out
    assert json.loads((site / "gallery.json").read_text())["facts"]["location"] == "out/imagenet-c"

    files = _texts(build) + _texts(site) + _texts(work / "res")
    assert any(name.endswith(".json") and b"source_id" in data for name, data in files)  # the samples' json read
    for needle in (MARKER, str(tmp_path)):
        leaks = [name for name, data in files if needle.encode() in data]
        assert not leaks, f"{needle} in {leaks}"


def test_a_folder_recorded_alike_is_rendered_again_and_verify_reads_where_the_build_ran(tmp_path, monkeypatch, capsys):
    """Two folders recorded alike (``photos``) are not the same source: the second renders again, and ``verify
    --source`` reads the recorded path where the build ran, or the one named by ``--source-from``."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    first, second = _folder(tmp_path / "a" / "photos"), _folder(tmp_path / "b" / "photos")
    (second / "dog" / "b.png").write_bytes(_png(2))
    argv = ["build", "imagenet-c", "--subsets", "gaussian_noise", "--severities", "1", "--size", "32", "--out", "out",
            "--no-progress", "--source"]  # fmt: skip
    assert main([*argv, f"imagefolder:{first}"]) == 0
    assert main(["verify", "out/imagenet-c", "--source-from", f"imagefolder:{first}"]) == 0
    capsys.readouterr()
    assert main([*argv, f"imagefolder:{second}"]) == 0
    assert "the source changed since 2 shards were rendered" in capsys.readouterr().err
    assert main(["verify", "out/imagenet-c", "--source-from", f"imagefolder:{first}"]) == 1
    assert main(["verify", "out/imagenet-c", "--source-from", f"imagefolder:{second}"]) == 0
    assert main(["verify", "out/imagenet-c", "--source"]) == 2  # ./photos does not exist here
    assert "records its source as imagefolder:photos" in capsys.readouterr().err
    (work / "photos").symlink_to(second)
    assert main(["verify", "out/imagenet-c", "--source"]) == 0


def test_recorded_forms(tmp_path, monkeypatch):
    home, work = tmp_path / "home" / "ada", tmp_path / "work"
    (work / "data" / "val").mkdir(parents=True)
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert shown_path("data/val") == "data/val" and shown_path("./data/val") == "./data/val"  # as written
    assert shown_path(str(work / "data" / "val")) == "data/val" and shown_path("/srv/images/val") == "val"
    assert shown_path("../elsewhere/x") == "x" and shown_path("~/photos") == "photos" and shown_path("~") == "~"
    assert shown_path(str(home / "photos"), cwd=str(tmp_path)) == "photos"  # never through the home folder's name
    assert shown_pattern("/srv/shards/clean-{000..009}.tar") == "clean-{000..009}.tar"
    assert shown_pattern(f"{work}/data/*/x.tar") == "data/*/x.tar" and shown_pattern("s/{a,b}/x.tar") == "s/{a,b}/x.tar"
    assert shown_pattern("{/srv/a/x.tar,~/b/y.tar}") == "{x.tar,y.tar}"
    from corruptgen.io.sources.webdataset import _relative_names

    assert _relative_names(["/srv/s/a/x.tar", "/srv/s/b/x.tar"]) == ["a/x.tar", "b/x.tar"]  # relative to their folder
    assert _relative_names([str(home / "s" / "x.tar"), "/srv/y.tar"]) == ["x.tar", "y.tar"]  # never through home
    assert without_credentials("s3://KEY:SECRET@bucket/p/x.tar?X-Amz-Signature=1") == "s3://bucket/p/x.tar"
    assert scrub("cannot read file /srv/a/b.jpg: [Errno 2] No such file: '~/c/d.jpg'") == (
        "cannot read file b.jpg: [Errno 2] No such file: 'd.jpg'"
    )
    for spec in ("samples", "hf:owner/name", "hf:owner/name:test", "imagefolder:data/val", "webdataset:s/x-*.tar"):
        assert recorded_spec(spec) == spec  # nothing to hide: as written (plan ids of such builds unchanged)
    assert recorded_spec(f"imagefolder:{work / 'data' / 'val'}") == "imagefolder:data/val"
    assert recorded_spec("hf:s3://KEY:SECRET@bucket/ds:test") == "hf:s3://bucket/ds:test"  # never a credential
    assert recorded_spec(recorded_spec("imagefolder:/srv/images/val")) == "imagefolder:val"
    from corruptgen.eval.labels import read_class_map

    (home / "maps").mkdir()
    (home / "maps" / "map.json").write_text('{"0": 1}')
    assert read_class_map(home / "maps" / "map.json")[1]["path"] == "map.json"  # recorded in eval results


def test_push_warns_about_a_build_that_records_a_local_path(tmp_path, monkeypatch, capsys):
    """A build by an earlier corruptgen recorded its source's absolute path: ``push`` says so before publishing."""
    from corruptgen.hub.push import plan_push

    monkeypatch.chdir(tmp_path)
    build = corruptgen.build("imagenet-c", source=f"imagefolder:{_folder(tmp_path / 'a' / 'photos')}", out="out",
                             subsets="gaussian_noise", severities="1", size=32).out_dir  # fmt: skip
    plan_push(build, "user/name")
    assert "warning" not in capsys.readouterr().err
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["source"]["path"] = "/home/ada/photos"  # as an earlier corruptgen wrote it
    (build / "manifest.json").write_text(json.dumps(manifest))
    plan_push(build, "user/name")
    assert "record the local path /home/ada/photos; rebuild it (--overwrite)" in capsys.readouterr().err


def test_a_build_that_recorded_the_absolute_path_resumes_with_the_same_command(tmp_path, monkeypatch, capsys):
    """A build by an earlier corruptgen (its plan records ``imagefolder:/abs/photos``) is the same build for the same
    command: nothing is rendered again, and the manifest then records the path as this corruptgen does."""
    from corruptgen.family.plan import digest, settings_id, subset_ids

    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # the source lies outside: recorded as imagefolder:photos
    spec = f"imagefolder:{_folder(tmp_path / 'a' / 'photos')}"
    argv = ["build", "imagenet-c", "--source", spec, "--subsets", "gaussian_noise", "--severities", "1,2", "--size",
            "32", "--out", "out", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    path = tmp_path / "work" / "out" / "imagenet-c" / "manifest.json"
    manifest = json.loads(path.read_text())
    plan = manifest["plan"]
    plan["source"]["spec"] = spec  # as an earlier corruptgen recorded it, with the ids that plan gives
    manifest.update(plan_id=digest(plan), settings_id=settings_id(plan))
    for name, sid in subset_ids(plan).items():
        manifest["subsets"][name]["id"] = sid
    path.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(argv) == 0
    assert "(0 written, 3 reused)" in capsys.readouterr().out
    assert json.loads(path.read_text())["plan"]["source"]["spec"] == "imagefolder:photos"
    path.write_text(json.dumps(manifest))
    assert main([*argv[:5], "gaussian_noise_s1", *argv[6:]]) == 0  # fewer subsets: the earlier plan, read from here
    assert "(0 written, 3 reused)" in capsys.readouterr().out
    assert json.loads(path.read_text())["invocation"]["arguments"]["source"] == "imagefolder:photos"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.trace/save/load
def test_an_adversarial_build_records_its_torchscript_surrogate_without_its_folder(tmp_path, monkeypatch, capsys):
    """``--surrogate torchscript:/abs/m.pt``: the plan, command and card record ``torchscript:m.pt`` (the weights'
    sha256 pins the model); the same command resumes the build and renders a lost shard again."""
    import torch

    home, work = tmp_path / MARKER, tmp_path / "work"
    home.mkdir()
    work.mkdir()
    net = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(3, 10)).eval()
    torch.jit.save(torch.jit.trace(net, torch.rand(1, 3, 32, 32)), home / "m.pt")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    argv = ["build", "adversarial", "--surrogate", f"torchscript:{home / 'm.pt'}", "--attacks", "fgsm:eps=0.04",
            "--labels", "ignore", "--limit", "1", "--size", "32", "--out", "out", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    build = work / "out" / "adversarial"
    manifest = json.loads((build / "manifest.json").read_text())
    assert manifest["plan"]["family_options"]["surrogate"] == "torchscript:m.pt"
    for needle in (MARKER, str(tmp_path)):
        leaks = [name for name, data in _texts(build) if needle.encode() in data]
        assert not leaks, f"{needle} in {leaks}"
    capsys.readouterr()
    assert main(argv) == 0 and "(0 written, 2 reused)" in capsys.readouterr().out
    next((build / "data").glob("fgsm*/*.tar")).unlink()
    assert main(argv) == 0 and "(1 written, 1 reused)" in capsys.readouterr().out
    assert json.loads((build / "manifest.json").read_text())["plan_id"] == manifest["plan_id"]

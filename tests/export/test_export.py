"""``corruptgen export --layout imagenet-c``: bytes equal the shards', readers see the right classes, re-export and
resume are idempotent, nothing is deleted or silently replaced, hard links via --link-dest."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from export_helpers import imagefolder_samples, shard_images
from PIL import Image

from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.export import ExportDir, export_build
from corruptgen.export.outdir import MARKER, PART_SUFFIX
from corruptgen.io.labels import imagenet_wnids, wnid_to_index

FOLDERS = {"clean": "clean", "gaussian_noise_s1": "gaussian_noise/1", "gaussian_noise_s2": "gaussian_noise/2",
           "contrast_s1": "contrast/1", "contrast_s2": "contrast/2"}  # fmt: skip
LABELS = {"chelsea": 281, "coffee": 967, "rocket": 657, "stereo_motorcycle": 670}  # the labelled sample photos


def exported_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file() and
            p.name != MARKER}  # fmt: skip


@pytest.fixture(scope="module")
def exported(icb, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("exp") / "ImageNet-C"
    return out, export_build(icb, out)


def test_tree_is_the_imagenet_c_layout_with_the_shards_bytes(icb, exported):
    out, report = exported
    expected = {}
    for subset, folder in FOLDERS.items():
        for key, (fld, data) in shard_images(icb, subset).items():
            if key in LABELS:
                assert fld == "jpg"
                expected[f"{folder}/{imagenet_wnids()[LABELS[key]]}/{key}.JPEG"] = data
    assert len(expected) == 5 * 4
    assert exported_files(out) == expected  # byte for byte, nothing else written
    assert report.files == {"written": 20} and report.ok
    assert report.folders == FOLDERS
    assert dict(report.skipped) == {"unlabelled (no class to put it in)": 5 * 2}  # astronaut, hubble_deep_field
    assert "unlabelled" in report.summary() and not list(out.rglob(f"*{PART_SUFFIX}"))


def test_imagefolder_reader_sees_the_imagenet_classes(exported):
    out, _ = exported
    for folder in FOLDERS.values():
        samples = imagefolder_samples(out / folder)
        classes = sorted(os.listdir(out / folder))
        assert len(samples) == 4
        for path, index in samples:
            key = Path(path).stem
            assert wnid_to_index()[classes[index]] == LABELS[key]
            with Image.open(path) as im:
                assert im.format == "JPEG" and im.size == (224, 224)


def test_datasets_imagefolder_loads_a_corruption_severity(exported, tmp_path):
    import datasets

    out, _ = exported
    ds = datasets.load_dataset("imagefolder", data_dir=str(out / "contrast" / "2"), split="train",
                               cache_dir=str(tmp_path / "cache"))  # fmt: skip
    names = ds.features["label"].names
    assert len(ds) == 4 and sorted(names) == names
    assert sorted(wnid_to_index()[names[row["label"]]] for row in ds) == sorted(LABELS.values())
    assert {row["image"].size for row in ds} == {(224, 224)}


def test_reexport_is_idempotent_and_touches_nothing(icb, exported):
    out, _ = exported
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*.JPEG")}
    report = export_build(icb, out)
    assert report.files == {"identical": 20}
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*.JPEG")} == before
    entries = json.loads((out / MARKER).read_text())["exports"]
    assert len(entries) == 1 and entries[0]["complete"] and entries[0]["plan_id"]


def test_interrupted_export_resumes(icb, tmp_path, monkeypatch):
    out = tmp_path / "exp"
    real_put = ExportDir.put
    calls = []

    def flaky(self, rel, data):
        if len(calls) == 7:
            raise KeyboardInterrupt
        calls.append(rel)
        return real_put(self, rel, data)

    monkeypatch.setattr(ExportDir, "put", flaky)
    with pytest.raises(KeyboardInterrupt):
        export_build(icb, out)
    monkeypatch.undo()
    assert json.loads((out / MARKER).read_text())["exports"][0]["complete"] is False
    stale = out / "contrast/2/n02123045" / f".chelsea.JPEG{PART_SUFFIX}"  # a killed run's part file: cleared
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"half a JPEG")
    report = export_build(icb, out)
    assert report.files == {"identical": 7, "written": 13}
    assert not stale.exists() and not list(out.rglob(f"*{PART_SUFFIX}"))
    assert json.loads((out / MARKER).read_text())["exports"][0]["complete"] is True


def test_stale_part_file_linked_elsewhere_is_never_written_through(icb, exported, tmp_path):
    out, _ = exported
    new = tmp_path / "exp"
    rel = "contrast/1/n02123045/chelsea.JPEG"
    original = (out / rel).read_bytes()
    part = new / "contrast/1/n02123045" / f".chelsea.JPEG{PART_SUFFIX}"
    part.parent.mkdir(parents=True)
    (new / MARKER).write_text('{"corruptgen_export": 1, "exports": []}')  # the interrupted export's marker
    os.link(out / "clean/n02123045/chelsea.JPEG", part)  # an interrupted link left behind
    clean_before = (out / "clean/n02123045/chelsea.JPEG").read_bytes()
    export_build(icb, new)
    assert (new / rel).read_bytes() == original
    assert (out / "clean/n02123045/chelsea.JPEG").read_bytes() == clean_before


def test_non_empty_unrelated_folder_is_refused_then_never_cleared(icb, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(CorruptgenError, match=r"not empty.*--allow-nonempty"):
        export_build(icb, out)
    assert sorted(os.listdir(out)) == ["notes.txt"]
    report = export_build(icb, out, allow_nonempty=True, subsets="contrast_s1")
    assert report.files == {"written": 4} and (out / "notes.txt").read_text() == "mine"
    assert report.folders == {"contrast_s1": "contrast/1"}


def test_other_bytes_are_conflicts_unless_overwrite(icb, exported, tmp_path, capsys):
    out = tmp_path / "exp"
    shutil.copytree(exported[0], out)
    rel = "gaussian_noise/2/n07920052/coffee.JPEG"
    (out / rel).write_bytes(b"edited by hand")
    report = export_build(icb, out, subsets=["gaussian_noise_s2"])
    assert report.files == {"identical": 3, "conflict": 1} and report.conflicts == [rel] and not report.ok
    assert (out / rel).read_bytes() == b"edited by hand"
    assert main(["export", str(icb), "--out", str(out), "--subsets", "gaussian_noise_s2", "--no-progress"]) == 1
    assert "--overwrite replaces them" in capsys.readouterr().out
    keep = tmp_path / "kept.JPEG"
    os.link(out / rel, keep)  # a hard link elsewhere keeps its bytes: the file is replaced, never written through
    report = export_build(icb, out, subsets="gaussian_noise_s2", overwrite=True)
    assert report.files == {"identical": 3, "replaced": 1} and report.ok
    assert (out / rel).read_bytes() == shard_images(icb, "gaussian_noise_s2")["coffee"][1]
    assert keep.read_bytes() == b"edited by hand"


def test_link_dest_hard_links_identical_files(icb, exported, tmp_path):
    first, _ = exported
    second = tmp_path / "again"
    report = export_build(icb, second, subsets="clean,contrast_s1", link_dest=[first])
    assert report.files == {"linked": 8}
    for rel in exported_files(second):
        a, b = (first / rel).stat(), (second / rel).stat()
        assert a.st_ino == b.st_ino and b.st_nlink >= 2


def test_png_build_keeps_its_bytes_and_extension(tmp_path):
    import corruptgen

    build = corruptgen.build("imagenet-c", subsets="contrast", severities="5", out=tmp_path / "b", limit=3,
                             image_format="png", clean=False).out_dir  # fmt: skip
    report = export_build(build, tmp_path / "exp")
    shards = shard_images(build, "contrast_s5")
    files = exported_files(tmp_path / "exp")
    assert files == {f"contrast/5/{imagenet_wnids()[LABELS[k]]}/{k}.png": shards[k][1] for k in ("chelsea", "coffee")}
    assert any("not JPEG" in n and ".png" in n for n in report.notes)


def test_sequences_export_one_folder_per_sample(tmp_path):
    import corruptgen

    build = corruptgen.build("imagenet-p", subsets="gaussian_noise", out=tmp_path / "b", limit=2).out_dir
    report = export_build(build, tmp_path / "exp", subsets="gaussian_noise")
    frames = sorted((tmp_path / "exp/gaussian_noise/1/n02123045/chelsea").iterdir())
    assert len(frames) >= 2 and [f.name for f in frames][:2] == ["000.JPEG", "001.JPEG"]
    assert report.files["written"] == len(frames) and report.skipped["unlabelled (no class to put it in)"] == 1


def test_remote_build_through_the_reader(icb, tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    for path in icb.rglob("*"):
        if path.is_file():
            fs.pipe(f"/exportsrc/{path.relative_to(icb).as_posix()}", path.read_bytes())
    report = export_build("memory://exportsrc", tmp_path / "exp", subsets="contrast_s2")
    assert report.files == {"written": 4}
    assert exported_files(tmp_path / "exp") == {
        f"contrast/2/{imagenet_wnids()[LABELS[k]]}/{k}.JPEG": data
        for k, (_, data) in shard_images(icb, "contrast_s2").items() if k in LABELS
    }  # fmt: skip


def test_class_dirs_option(icb, tmp_path):
    report = export_build(icb, tmp_path / "exp", subsets="clean", options=["class-dirs=index"])
    assert sorted(os.listdir(tmp_path / "exp/clean")) == ["00281", "00657", "00670", "00967"]
    assert any("label indices" in n for n in report.notes)
    export_build(icb, tmp_path / "names", subsets="clean", options={"class-dirs": "name"})
    assert "tabby cat" in os.listdir(tmp_path / "names/clean")
    with pytest.raises(CorruptgenError, match="class-dirs must be one of"):
        export_build(icb, tmp_path / "bad", options={"class-dirs": "colour"})
    with pytest.raises(CorruptgenError, match="no option 'depth'"):
        export_build(icb, tmp_path / "bad", options=["depth=2"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--subsets", "contrast_s3"], "no subset 'contrast_s3'; did you mean"),
        (["--layout", "imagenet-k"], "unknown export layout 'imagenet-k'"),
        (["--option", "class-dirs"], "--option expects KEY=VALUE"),
    ],
)
def test_user_errors_are_one_line_exit_2(icb, tmp_path, capsys, args, message):
    assert main(["export", str(icb), "--out", str(tmp_path / "x"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_export_and_layouts(icb, tmp_path, capsys):
    assert main(["export", "--layouts"]) == 0
    assert "imagenet-c" in capsys.readouterr().out
    assert main(["export", str(icb), "--out", str(tmp_path / "exp"), "--subsets", "clean", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["files"] == {"written": 4} and shown["folders"] == {"clean": "clean"}
    assert main(["export", str(icb)]) == 2


def test_keys_that_would_leave_the_folder_are_skipped(tmp_path, icb):
    """Plain shards from elsewhere (no manifest): a member named ``../../../../evil.jpg`` cannot escape ``--out``."""
    import io
    import tarfile

    shard_dir = tmp_path / "foreign" / "data" / "clean"
    shard_dir.mkdir(parents=True)
    jpeg = shard_images(icb, "clean")["chelsea"][1]
    with tarfile.open(shard_dir / "test-00000.tar", "w") as tar:
        for name, data in (("../../../../evil.cls", b"281"), ("../../../../evil.jpg", jpeg),
                           ("fine.cls", b"281"), ("fine.jpg", jpeg)):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out = tmp_path / "sandbox" / "exp"
    report = export_build(tmp_path / "foreign", out, options={"class-dirs": "wnid"})
    assert exported_files(out) == {"clean/n02123045/fine.JPEG": jpeg}
    assert report.skipped == {"unsafe export path 'clean/n02123045/../../../../evil.JPEG'": 1}
    assert sorted(p.name for p in (tmp_path / "sandbox").iterdir()) == ["exp"]
    with pytest.raises(ValueError, match="unsafe"), ExportDir(tmp_path / "x", report) as target:
        target.put("/etc/passwd", b"")


def test_without_hard_links_the_export_copies_and_says_so(icb, exported, tmp_path, monkeypatch):
    import errno

    def no_links(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    report = export_build(icb, tmp_path / "copy", subsets="clean", link_dest=[exported[0]])
    assert report.files == {"written": 4}
    assert any("cannot hard-link" in n and "copied instead" in n for n in report.notes)
    assert exported_files(tmp_path / "copy") == {k: v for k, v in exported_files(exported[0]).items()
                                                 if k.startswith("clean/")}  # fmt: skip

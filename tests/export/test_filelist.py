"""``filelist:<list>[:<root>]``: exactly the listed images in list order, labels from the wnid folders, missing and
escaping paths skipped with a reason; with the export, the RobustBench list joins onto every exported folder."""

from __future__ import annotations

import json
import os

import pytest
from export_helpers import write_imagenet_like
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.export import export_build
from corruptgen.io.decode import BadImageError
from corruptgen.io.labels import imagenet_names, wnid_to_index
from corruptgen.io.sources import open_source


@pytest.fixture(scope="module")
def val(tmp_path_factory):
    """An ImageNet-like validation folder and a RobustBench-format list naming its files out of sorted order."""
    root = tmp_path_factory.mktemp("imagenet") / "val"
    rels = write_imagenet_like(root)
    listed = [rels[3], rels[0], rels[2], rels[4]]  # not sorted, rels[1] left out
    lst = root.parent / "test_image_ids.txt"
    lst.write_text("".join(f"{r}\n" for r in listed))
    return root, lst, listed


def test_items_are_the_list_in_order_with_wnid_labels(val):
    root, lst, listed = val
    source = open_source(f"filelist:{lst}:{root}")
    items = source.items()
    assert [i.source_id for i in items] == listed
    assert [i.key for i in items] == [os.path.splitext(r.split("/")[1])[0] for r in listed]
    assert [i.label for i in items] == [wnid_to_index()[r.split("/")[0]] for r in listed]
    assert [i.label_name for i in items] == [imagenet_names()[i.label] for i in items]
    assert source.read(0) == (root / listed[0]).read_bytes()
    described = source.describe()
    assert described["kind"] == "filelist" and described["layout"] == "imagenet-wnid" and described["missing"] == 0


def test_root_defaults_to_the_lists_folder(val, tmp_path):
    root, _, listed = val
    lst = root / "ids.txt"
    lst.write_text(f"{listed[1]}\r\n\n{listed[0]}")  # CRLF endings and blank lines are fine
    try:
        assert [i.source_id for i in open_source(f"filelist:{lst}").items()] == [listed[1], listed[0]]
    finally:
        lst.unlink()


def test_missing_escaping_and_repeated_lines_are_skipped_with_reasons(val, tmp_path):
    root, _, listed = val
    (tmp_path / "outside.JPEG").write_bytes((root / listed[0]).read_bytes())
    lines = [listed[0], "n01440764/ILSVRC2012_val_99999999.JPEG", "../outside.JPEG", str(tmp_path / "outside.JPEG"),
             f"./{listed[0]}", "n07920052/../../outside.JPEG", listed[2]]  # fmt: skip
    lst = tmp_path / "list.txt"
    lst.write_text("\n".join(lines) + "\n")
    source = open_source(f"filelist:{lst}:{root}")
    assert len(source) == 7
    reasons = {}
    for i in range(len(source)):
        try:
            source.read(i)
        except BadImageError as e:
            reasons[i] = str(e)
    assert set(reasons) == {1, 2, 3, 4, 5}
    assert "file not found" in reasons[1]
    assert "leaves the root" in reasons[2] and "leaves the root" in reasons[5]
    assert "absolute path refused" in reasons[3]
    assert "listed twice (first on line 1)" in reasons[4]
    build = corruptgen.build("imagenet-c", source=f"filelist:{lst}:{root}", subsets="contrast", severities="1",
                             out=tmp_path / "b", clean=False)  # fmt: skip
    manifest = build.manifest
    assert manifest["counts"]["skipped_inputs"] == 5 and manifest["counts"]["per_subset"] == {"contrast_s1": 2}
    assert {s["source_id"] for s in manifest["skipped"]} >= {"n01440764/ILSVRC2012_val_99999999.JPEG"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("filelist:", "missing list file"),
        ("filelist:/no/such/list.txt", "no such list file"),
    ],
)
def test_bad_specs_fail_in_one_line(spec, message):
    with pytest.raises(CorruptgenError, match=message):
        open_source(spec)


def test_a_list_under_the_wrong_root_fails_early(val, tmp_path, capsys):
    _, lst, _ = val
    with pytest.raises(CorruptgenError, match="none of the 4 listed files exists"):
        open_source(f"filelist:{lst}:{tmp_path}")
    bad = tmp_path / "bad.txt"
    bad.write_text("/etc/hostname\n")
    with pytest.raises(CorruptgenError, match="no usable path"):
        open_source(f"filelist:{bad}")
    assert main(["build", "imagenet-c", "--source", f"filelist:{lst}:{tmp_path}", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_robustbench_list_joins_onto_every_exported_folder(val, tmp_path):
    """RobustBench reads ``os.path.join(<ImageNet-C>/<corruption>/<severity>, line)`` with the label of the line's
    wnid folder: after build + export every listed line resolves, in every corruption and severity folder."""
    root, lst, listed = val
    build = corruptgen.build("imagenet-c", source=f"filelist:{lst}:{root}", subsets="gaussian_noise,contrast",
                             severities="2,5", out=tmp_path / "b").out_dir  # fmt: skip
    metas = [json.loads(raw) for raw in _jsons(build, "contrast_s5")]
    assert [m["key"] for m in metas] == [os.path.splitext(r.split("/")[1])[0] for r in listed]  # list order
    assert [m["label"] for m in metas] == [wnid_to_index()[r.split("/")[0]] for r in listed]
    report = export_build(build, tmp_path / "data" / "ImageNet-C")
    assert report.files["written"] == 5 * 4 and not report.skipped
    for folder in ("gaussian_noise/2", "gaussian_noise/5", "contrast/2", "contrast/5", "clean"):
        for line in lst.read_text().splitlines():
            path = os.path.join(tmp_path / "data" / "ImageNet-C" / folder, line)
            with Image.open(path) as im:
                assert im.format == "JPEG" and im.size == (224, 224)


def _jsons(build, subset):
    import tarfile

    for shard in sorted((build / "data" / subset).glob("*.tar")):
        with tarfile.open(shard) as tar:
            for member in tar:
                if member.name.endswith(".json"):
                    yield tar.extractfile(member).read()

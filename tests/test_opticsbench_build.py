"""OpticsBench / OpticsBenchRG end to end: selection, kernel stacks in the plan, CLI builds, loading, determinism."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

import corruptgen
from corruptgen.api import make_plan
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.families.opticsbench import corruptions as oc

REF = Path(__file__).resolve().parents[2] / "shared/reference/opticsbench"
STACK, STACK_RG = REF / "kernel_stack_iccvw.pt", REF / "kernel_stack_rg_iccvw.pt"
pytestmark = pytest.mark.skipif(not STACK_RG.is_file(), reason="published kernel stacks not available")
MAIN = [f"{c}_s{s}" for c in ("astigmatism", "coma", "defocus_spherical", "trefoil") for s in range(1, 6)]


def names(plan) -> list[str]:
    return [s.name for s in plan.subsets]


def tar_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


def test_selection_and_plan_identity():
    plan = make_plan("opticsbench", kernels=str(STACK))
    assert names(plan) == ["clean", *MAIN] and plan.preprocess.name == "imagenet" and plan.quality == 85
    opts = dict(plan.subset("coma_s3").options)
    sha = oc.load_stack(str(STACK))[1]["sha256"]
    assert opts == {"severity": 3, "kernels": str(STACK.resolve()), "kernels_sha256": sha,
                    "padding": "zero", "quantize": "round", "choice": "rng"}  # fmt: skip
    assert plan.subset("coma_s3").corruption == "optics/coma" and plan.subset("coma_s3").severity == 3
    plan = make_plan("opticsbench", kernels=str(STACK), subsets="coma,defocus_disk,trefoil_s5", severities="1,5",
                     clean=False)  # fmt: skip
    assert names(plan) == ["coma_s1", "coma_s5", "trefoil_s5", "defocus_disk_s1", "defocus_disk_s5"]
    assert dict(plan.subset("defocus_disk_s5").options) == {"severity": 5, "padding": "reflect", "quantize": "round"}
    assert len(make_plan("opticsbench", kernels=str(STACK), subsets="all").subsets) == 26
    assert len(make_plan("opticsbench", kernels=str(STACK), severities="2..3").subsets) == 9
    a = make_plan("opticsbench", kernels=str(STACK), severities="1..3")
    assert a.plan_id == make_plan("opticsbench", kernels=str(STACK), severities=[3, 2, 1]).plan_id
    rg = make_plan("opticsbench-rg", kernels=str(STACK_RG))
    assert names(rg) == names(make_plan("opticsbench", kernels=str(STACK)))
    assert dict(rg.subset("coma_s1").options)["kernels_sha256"].startswith("d2764e73")
    compat = make_plan("opticsbench", kernels=str(STACK), compat="ICCVW2023")
    assert compat.plan_id != make_plan("opticsbench", kernels=str(STACK)).plan_id
    copts = dict(compat.subset("trefoil_s2").options)
    assert (copts["quantize"], copts["choice"], copts["padding"]) == ("truncate", "iccvw2023", "zero")


def test_selection_errors(tmp_path, monkeypatch):
    for kw, err, match in (
        ({"severities": "0"}, CorruptgenError, "--severities must be integers in 1..5"),
        ({"subsets": "coma_s2", "severities": "1"}, CorruptgenError, "not in --severities"),
        ({"subsets": "comma"}, UnknownNameError, "did you mean coma"),
        ({"compat": "iccv"}, CorruptgenError, "unknown --compat"),
        ({"difficulty": 2}, CorruptgenError, "no option --difficulty"),
        ({"compat": "iccvw2023", "quality": 95}, CorruptgenError, "JPEG quality 85"),
        ({"compat": "iccvw2023", "size": 112}, CorruptgenError, "CenterCrop"),
    ):
        with pytest.raises(err, match=match):
            make_plan("opticsbench", kernels=str(STACK), **kw)
    with pytest.raises(CorruptgenError, match="other benchmark's stack"):
        make_plan("opticsbench-rg", kernels=str(STACK))
    with pytest.raises(CorruptgenError, match="no such kernel stack file"):
        make_plan("opticsbench", kernels=str(tmp_path / "nope.npz"))
    monkeypatch.setattr(oc, "kernels_dir", lambda: tmp_path)  # no kernels/opticsbench.npz yet
    with pytest.raises(CorruptgenError, match=r"run `python scripts/make_kernels\.py` or pass --kernels"):
        make_plan("opticsbench")
    assert names(make_plan("opticsbench", subsets="defocus_disk", clean=False))[0] == "defocus_disk_s1"  # no stack


@pytest.mark.parametrize(("bench", "stack"), [("opticsbench", STACK), ("opticsbench-rg", STACK_RG)])
def test_cli_build_writes_20_subsets_and_clean_that_load(tmp_path, capsys, hf_cache, bench, stack):
    import datasets

    code = main(["build", bench, "--limit", "2", "--kernels", str(stack), "--out", str(tmp_path), "--no-progress"])
    assert code == 0 and "21 subsets x 2 inputs -> 42 samples" in capsys.readouterr().out
    root = tmp_path / bench
    assert sorted(p.name for p in (root / "data").iterdir()) == sorted(["clean", *MAIN])
    files = {name: str(root / f"data/{name}/test-00000.tar") for name in ["clean", *MAIN]}
    loaded = datasets.load_dataset("webdataset", data_files=files)
    assert sorted(loaded) == sorted(files) and all(len(split) == 2 for split in loaded.values())
    row = loaded["coma_s4"][0]
    assert row["jpg"].size == (224, 224) and row["json"]["severity"] == 4
    params = row["json"]["params"]
    assert params["fringe_mode"] in (7, 8) and params["kernels"] == stack.name and params["padding"] == "zero"
    assert params["kernels_sha256"] == oc.load_stack(str(stack))[1]["sha256"]
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["samples"] == 42 and corruptgen.verify(root).ok


def test_workers_and_batch_size_do_not_change_bytes(tmp_path):
    kw = dict(source="samples", limit=4, shard_size=2, subsets="coma,trefoil_s5,defocus_disk_s1", severities="1,5",
              kernels=str(STACK))  # fmt: skip
    corruptgen.build("opticsbench", out=tmp_path / "a", workers=1, **kw)
    corruptgen.build("opticsbench", out=tmp_path / "b", workers=2, **kw)
    corruptgen.build("opticsbench", out=tmp_path / "c", workers=1, batch_size=1, **kw)
    a = tar_bytes(tmp_path / "a/opticsbench")
    assert len(a) == 5 * 2 and a == tar_bytes(tmp_path / "b/opticsbench") == tar_bytes(tmp_path / "c/opticsbench")
    with tarfile.open(tmp_path / "a/opticsbench/data/coma_s5/test-00001.tar") as tar:
        meta = json.loads(tar.extractfile(next(n for n in tar.getnames() if n.endswith(".json"))).read())
    assert meta["params"]["choice"] == "rng" and meta["corruption"] == "coma"


def test_bad_kernels_path_is_one_line_exit_2(tmp_path, capsys):
    code = main(["build", "opticsbench", "--limit", "2", "--kernels", str(tmp_path / "missing.pt"),
                 "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no such kernel stack file" in err
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a zip")
    assert main(["build", "opticsbench", "--kernels", str(bad), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_compat_mode_gets_the_source_position_from_the_engine(tmp_path):
    """--compat iccvw2023 picks each image's fringe mode by its position in the source (the batch-128 pattern)."""
    corruptgen.build("opticsbench", out=tmp_path, kernels=str(STACK), compat="iccvw2023", subsets="coma_s3",
                     clean=False, limit=3)  # fmt: skip
    with tarfile.open(tmp_path / "opticsbench/data/coma_s3/test-00000.tar") as tar:
        metas = [json.loads(tar.extractfile(m).read()) for m in tar.getmembers() if m.name.endswith(".json")]
    assert len(metas) == 3 and {m["params"]["choice"] for m in metas} == {"iccvw2023"}

"""What a new user stumbled on (issue 35, item 6), each answered: a family's alias builds into the family's own
folder; typos suggest canonical names whatever their case; ``verify --source`` and a re-run name the inputs that
changed in a few lines; every command takes ``--no-progress``; a folder of mixed wnid and other class folders is
refused (``--folder-labels`` numbers them on purpose) and the skip notice comes once; ``eval --subsets`` suggests
near names in a short line; hints name only flags the user passed; ``build --help`` lists every source form; counts
read in the singular; the progress bar counts inputs."""

from __future__ import annotations

import argparse
import json
import os
import re
import tarfile
from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image
from test_user_mistakes import one_line_error as _one_line_error

import corruptgen
from corruptgen.cli import build_parser, main
from corruptgen.errors import CorruptgenError

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "camera", "clock", "hubble_deep_field", "retina", "moon")


def _photo(path: Path, n: int, side: int = 40) -> None:
    """A small BMP of photo ``n`` (every picture of one size has the same number of bytes)."""
    arr = np.ascontiguousarray(getattr(skimage.data, PHOTOS[n % len(PHOTOS)])())
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).convert("RGB").resize((side, side)).save(path, format="BMP")


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path, monkeypatch):
    """Commands run where the user's data is: a build records a local source relative to that folder, and a later
    ``verify --source`` there finds it again."""
    monkeypatch.chdir(tmp_path)


def _photos(root: Path, n: int) -> Path:
    for i in range(n):
        _photo(root / f"img_{i:03d}.bmp", i)
    return root


def one_line_error(capsys, argv: list[str], code: int = 2) -> str:
    """The one error line of the CLI (``test_user_mistakes.one_line_error``), without its ``corruptgen: error:``."""
    return _one_line_error(capsys, argv, code).removeprefix("corruptgen: error: ").rstrip("\n")


# ------------------------------------------------------------------------------------- 1. aliases, typos
def test_an_alias_builds_into_the_familys_own_folder_and_a_later_build_reuses_it(tmp_path, capsys):
    photos = _photos(tmp_path / "in", 1)
    args = ["--source", f"imagefolder:{photos}", "--subsets", "brightness", "--severities", "1", "--size", "32",
            "--out", str(tmp_path / "out"), "--no-card", "--no-progress"]  # fmt: skip
    assert main(["build", "imagenet_c", *args]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["imagenet-c"]
    manifest = json.loads((tmp_path / "out/imagenet-c/manifest.json").read_text())
    assert manifest["benchmark"] == "imagenet-c" and manifest["invocation"]["command"].startswith(
        "corruptgen build imagenet-c "
    )
    capsys.readouterr()
    assert main(["build", "imagenet-c", *args]) == 0
    assert "(0 written, 2 reused) at " in capsys.readouterr().out  # the same build, not a second copy
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["imagenet-c"]
    result = corruptgen.build("imagenet_c", source=f"imagefolder:{photos}", subsets="brightness", severities="1",
                              size=32, out=tmp_path / "out", card=False)  # fmt: skip
    assert Path(result.out_dir) == tmp_path / "out/imagenet-c" and result.written_shards == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["build", "imagenetc"], "unknown benchmark 'imagenetc'; did you mean imagenet-c, imagenet64-c, imagenet-p?"),
    (["build", "SYN2NAT"], "unknown benchmark 'SYN2NAT'; did you mean syn2nat?"),
    (["list", "ImageNet_C"], "unknown benchmark 'ImageNet_C'; did you mean imagenet-c"),
    (["bench", "--families", "syn2nt"], "unknown family 'syn2nt' for bench; did you mean syn2nat? choose from"),
])  # fmt: skip
def test_a_typo_suggests_canonical_names_whatever_its_case(argv, message, capsys):
    err = one_line_error(capsys, argv)
    assert err.startswith(message) and "_c" not in err.replace("'ImageNet_C'", ""), err  # no alias offered


def test_list_and_bench_take_an_alias(capsys):
    from corruptgen.bench import parse_families

    assert main(["list", "imagenet_c"]) == 0
    assert capsys.readouterr().out.startswith("ImageNet-C — ")
    assert parse_families("imagenet_c,IMAGENET-C,Syn2Nat") == ["imagenet-c", "syn2nat"]


# ------------------------------------------------------------------------------------- 2. what changed, named
def _build(root: Path, out: Path, **kw):
    return corruptgen.build("syn2nat", source=f"imagefolder:{root}", out=out, subsets="solarize,posterize",
                            shard_size=2, card=False, **kw)  # fmt: skip


def _verify_lines(build: Path, capsys) -> list[str]:
    assert main(["verify", str(build), "--source", "--no-progress"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("verify FAILED"), lines
    return [line.removeprefix("source changed: ") for line in lines[:-1]]


def test_verify_source_and_a_rerun_name_the_changed_inputs_in_a_line_per_kind(tmp_path, capsys):
    root, out = _photos(tmp_path / "photos", 8), tmp_path / "out"
    _build(root, out)
    _photo(root / "img_000a.bmp", 7)  # sorts second: the inputs after it move by one (two of them to another shard)
    (root / "img_005.bmp").unlink()  # ... and back by one after it
    _photo(root / "img_006.bmp", 1)  # another picture
    lines = _verify_lines(out / "syn2nat", capsys)
    assert lines == [
        "1 input modified: img_006",
        "1 input added: img_000a",
        "1 input removed (a removed input's name is not recorded): after img_004",
        "2 inputs moved to another shard (inputs were added or removed before them): img_001, img_003",
        "12 shards to render again (re-run the build): data/clean/test-00000.tar, data/clean/test-00001.tar, "
        "data/clean/test-00002.tar and 9 more",
    ]
    capsys.readouterr()
    _build(root, out)
    err = capsys.readouterr().err.splitlines()
    assert err == ["corruptgen: the source changed since 12 shards were rendered (" + "; ".join(lines[:4]) +
                   "); rendering them again"]  # fmt: skip
    assert main(["verify", str(out / "syn2nat"), "--source"]) == 0


def test_a_touched_input_and_one_whose_bytes_alone_changed_are_told_apart(tmp_path, capsys):
    root, out = _photos(tmp_path / "photos", 4), tmp_path / "out"
    _build(root, out)
    os.utime(root / "img_001.bmp", ns=(1, 1))  # another modification time, the same bytes
    target, before = root / "img_002.bmp", (root / "img_002.bmp").stat()
    _photo(target, 8)  # the same size; its modification time put back: only the bytes tell
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    lines = _verify_lines(out / "syn2nat", capsys)
    assert lines[:2] == [
        "1 input modified: img_002",
        "1 input touched (another size or modification time, the same bytes): img_001",
    ], lines
    assert lines[2].startswith("6 shards to render again"), lines


def test_a_relabelled_input_is_named(tmp_path, capsys):
    images = np.stack([np.full((8, 8, 3), 40 * i, np.uint8) for i in range(4)])
    np.save(tmp_path / "x.npy", images)
    np.save(tmp_path / "y.npy", np.array([0, 1, 2, 3]))
    kw = dict(source=f"npy:{tmp_path / 'x.npy'}:{tmp_path / 'y.npy'}", out=tmp_path / "out", subsets="contrast_s1",
              shard_size=2, card=False)  # fmt: skip
    corruptgen.build("cifar10-c", **kw)
    np.save(tmp_path / "y.npy", np.array([0, 1, 5, 3]))
    lines = _verify_lines(tmp_path / "out/cifar10-c", capsys)
    assert lines[0] == "1 input relabelled: 00000002", lines


def test_a_build_without_input_prints_names_the_ranges_of_its_changed_shards(tmp_path, capsys):
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    _build(root, out)
    path = out / "syn2nat/manifest.json"
    manifest = json.loads(path.read_text())
    for record in manifest["shards"].values():
        assert record["source"].pop("each", None) is None or record["subset"] == "clean"
    path.write_text(json.dumps(manifest))
    _photo(root / "img_004.bmp", 8)
    lines = _verify_lines(out / "syn2nat", capsys)
    assert lines[0] == "the inputs of 1 shard changed (which ones is not recorded): img_004, img_005", lines


# ------------------------------------------------------------------------------------- 2b. --no-progress
def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                yield (*path, name), command
                yield from _commands(command, (*path, name))


def test_every_command_takes_no_progress(tmp_path, capsys):
    parser, _ = build_parser()
    commands = dict(_commands(parser))
    assert {"build", "verify", "eval", "push", "card", "list", "analyze", ("analyze", "overlap")} - {
        c[0] if len(c) == 1 else c for c in commands}  == set()  # fmt: skip
    assert [" ".join(c) for c, p in commands.items() if "--no-progress" not in p._option_string_actions] == []
    corruptgen.build("syn2nat", out=tmp_path, subsets="solarize", limit=1, card=False, clean=False)
    assert main(["verify", str(tmp_path / "syn2nat"), "--no-progress"]) == 0
    assert main(["list", "--no-progress"]) == 0


# ------------------------------------------------------------------------------------- 3. mixed wnid folders
TENCH = "n01440764"


def _folders(root: Path, names: list[str]) -> Path:
    for i, name in enumerate(names):
        _photo(root / name / "a.bmp", i, side=16)
    return root


def test_a_minority_of_wnid_folders_is_refused_naming_the_odd_ones(tmp_path, capsys):
    root = _folders(tmp_path / "in", [TENCH, "n0244O764", "cat"])  # a letter O in the second wnid
    argv = ["build", "syn2nat", "--source", f"imagefolder:{root}", "--subsets", "solarize", "--out",
            str(tmp_path / "out"), "--no-card", "--no-progress"]  # fmt: skip
    err = one_line_error(capsys, argv)
    assert err == (
        f"imagefolder: {root}: 1 of 3 class folders are ImageNet-1k wnids but 2 are not (cat, n0244O764): "
        "rename or remove those, or pass --folder-labels to label every folder by its sorted position"
    )
    assert not (tmp_path / "out").exists()
    assert main([*argv, "--folder-labels"]) == 0
    manifest = json.loads((tmp_path / "out/syn2nat/manifest.json").read_text())
    assert manifest["invocation"]["command"].endswith("--folder-labels")
    assert manifest["source"]["layout"] == "class-folders"
    with tarfile.open(tmp_path / "out/syn2nat/data/clean/test-00000.tar") as tar:
        metas = [json.load(tar.extractfile(m)) for m in tar.getmembers() if m.name.endswith(".json")]
    labels = {meta["source_id"]: meta["label"] for meta in metas}
    assert labels == {"cat/a.bmp": 0, f"{TENCH}/a.bmp": 1, "n0244O764/a.bmp": 2}  # sorted folder order, on purpose
    capsys.readouterr()
    assert main([*argv, "--labels", "folders"]) == 0  # the same option, spelled as the refusal's reader may guess
    assert "(0 written, 2 reused)" in capsys.readouterr().out


def test_wnid_folders_with_a_stray_one_note_the_skip_once(tmp_path, capsys):
    root = _folders(tmp_path / "in", [TENCH, "n01443537", "cat"])
    argv = ["build", "syn2nat", "--source", f"imagefolder:{root}", "--subsets", "solarize", "--out",
            str(tmp_path / "out"), "--no-card", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err == (
        "corruptgen: imagefolder: 1 image skipped, in 1 folder not among the ImageNet-1k classes (wnids): cat\n"
    )


def test_folder_labels_applies_to_folder_sources_only(capsys):
    err = one_line_error(capsys, ["build", "syn2nat", "--folder-labels", "--limit", "1", "--no-progress"])
    assert err == "--folder-labels applies to imagefolder: and filelist: sources, not samples:"


# ------------------------------------------------------------------------------------- 4. eval --subsets
def test_eval_subsets_suggests_near_names_in_a_short_line(tmp_path, capsys):
    from corruptgen.eval.data import EvalSource, SubsetData

    root = _photos(tmp_path / "in", 1)
    corruptgen.build("cifar10-c", source=f"imagefolder:{root}", subsets="contrast_s1,contrast_s2", card=False,
                     out=tmp_path / "out")  # fmt: skip
    build = str(tmp_path / "out/cifar10-c")
    err = one_line_error(capsys, ["eval", build, "--subsets", "contrast_s9", "--out", str(tmp_path / "res")])
    assert err == f"unknown subset 'contrast_s9' in {build}; did you mean contrast_s1, contrast_s2?"
    err = one_line_error(capsys, ["eval", build, "--subsets", "zzz,yyy", "--out", str(tmp_path / "res")])
    assert err == f"unknown subset 'zzz' (and 1 more) in {build}; it has 3 subsets: clean, contrast_s1, contrast_s2"
    names = ["clean"] + [f"{c}_s{s}" for c in ("frost", "fog", "snow", "glass_blur", "zoom_blur") for s in range(1, 6)]
    names += [f"other_{i:02d}" for i in range(76 - len(names))]
    source = EvalSource("b", "local", "b", None, {n: SubsetData(n, [], []) for n in names}, False)
    for wrong in ("frost_s9", "nothing_like_it"):
        with pytest.raises(CorruptgenError) as caught:
            source.select(wrong)
        assert len(str(caught.value)) <= 200 and str(caught.value).count(",") <= 3, str(caught.value)
    assert (
        str(caught.value) == "unknown subset 'nothing_like_it' in b; it has 76 subsets: clean, frost_s1, frost_s2, "
        "frost_s3 and 72 more"
    )


# ------------------------------------------------------------------------------------- 5. hints
def test_hints_name_only_the_flags_that_were_passed(capsys):
    base = ["build", "opticsbench", "--compat", "iccvw2023", "--limit", "1", "--no-progress"]
    assert one_line_error(capsys, [*base, "--quality", "90"]).endswith("; drop --quality")
    assert one_line_error(capsys, [*base, "--format", "png"]).endswith("; drop --format")
    assert one_line_error(capsys, [*base, "--size", "64"]).endswith("; drop --size")
    err = one_line_error(capsys, ["build", "syn2nat", "--label-column", "y", "--no-progress"])
    assert err == "--label-column only applies to hf:<dataset> sources"


# ------------------------------------------------------------------------------------- 7. help, plurals, progress
def test_build_help_lists_every_registered_source_form(capsys):
    from corruptgen.io.sources import SOURCES

    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, opener in SOURCES.items():
        assert " ".join(opener.form.split()) in text.replace("- ", "-"), name
    assert {"filelist", "npy"} <= set(SOURCES.names())


def test_counts_of_one_are_singular_and_no_limit_reads_as_such(tmp_path, capsys):
    root = _photos(tmp_path / "in", 3)
    argv = ["build", "syn2nat", "--source", f"imagefolder:{root}", "--subsets", "solarize", "--no-clean", "--out",
            str(tmp_path / "out"), "--no-card", "--no-progress"]  # fmt: skip
    assert main([*argv, "--limit", "1"]) == 0
    summary = capsys.readouterr().out.strip()
    assert re.match(r"syn2nat: 1 subset x 1 input -> 1 sample in 1 shard \(1 written, 0 reused\) at .*; skipped 0 of "
                    r"1 input$", summary), summary  # fmt: skip
    assert main(["verify", str(tmp_path / "out/syn2nat")]) == 0
    assert capsys.readouterr().out.startswith("verify OK: 1 shard checked")
    assert "other settings: no --limit (built: 1);" in one_line_error(capsys, argv)
    assert main([*argv, "--limit", "1", "--overwrite"]) == 0 and main([*argv, "--overwrite"]) == 0
    capsys.readouterr()
    assert "other settings: --limit 2 (built: no limit);" in one_line_error(capsys, [*argv, "--limit", "2"])


class _Bar:
    def __init__(self, total, **_):
        self.total, self.done = total, 0
        _Bar.made.append(self)

    def update(self, n):
        self.done += n

    def close(self):
        pass


def test_the_progress_bar_counts_each_input_once_when_parts_share_a_chunk(tmp_path, monkeypatch):
    import corruptgen.engine.run

    _Bar.made = []
    monkeypatch.setattr(corruptgen.engine.run, "progress_bar", _Bar)
    root = _photos(tmp_path / "in", 3)
    corruptgen.build("cifar10-c", source=f"imagefolder:{root}", subsets="contrast_s1,contrast_s2,contrast_s3",
                     out=tmp_path / "out", card=False, workers=2, progress=True)  # fmt: skip
    (bar,) = _Bar.made
    assert (bar.total, bar.done) == (3, 3)  # 3 inputs shared out over 2 parts: not 6


def test_parts_of_a_chunk_count_its_inputs_once():
    from corruptgen.engine.chunk import ChunkTask
    from corruptgen.engine.run import _share_out

    tasks = [ChunkTask(plan=None, out_dir="o", chunk=c, start=10 * c, stop=10 * c + size, subsets=tuple("abcde"))
             for c, size in enumerate((10, 7))]  # fmt: skip
    for workers in (1, 2, 3, 5, 8):
        shared = _share_out(tasks, workers)
        assert sum(t.counted for t in shared) == 17
        assert all(t.counted >= 0 for t in shared)

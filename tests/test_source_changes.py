"""A source that changed since a build (or its interrupted run) rendered from it: the next run of the same command
renders the changed chunks again, so the shards equal a fresh build of the changed source; ``verify --source``
reports what no longer matches; an input that could not be read (an I/O error, not a bad image) is read again by
the next run; a build never takes a build directory (its own or another) as input."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.engine import executors

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "camera", "clock", "hubble_deep_field", "retina", "moon")


def _photo(path: Path, n: int, side: int = 40) -> None:
    """A small BMP of photo ``n`` (BMP: every picture of one size has the same number of bytes)."""
    arr = getattr(skimage.data, PHOTOS[n % len(PHOTOS)])()
    image = Image.fromarray(np.ascontiguousarray(arr)).convert("RGB").resize((side, side))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="BMP")


def _photos(root: Path, n: int) -> Path:
    for i in range(n):
        _photo(root / f"img_{i:03d}.bmp", i)
    return root


def tar_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


def _build(root: Path, out: Path, **kw):
    return corruptgen.build("syn2nat", source=f"imagefolder:{root}", out=out, subsets="posterize", shard_size=2,
                            card=False, **kw)  # fmt: skip


def _interrupted(root: Path, out: Path, monkeypatch, stop_at: int) -> None:
    """A build of ``root`` interrupted (Ctrl-C) when chunk ``stop_at`` starts: chunks before it are finished."""
    real = executors.render_chunk

    def render(task, progress=None):
        if task.chunk >= stop_at:
            raise KeyboardInterrupt
        return real(task, progress)

    with monkeypatch.context() as patch:
        patch.setattr(executors, "render_chunk", render)
        with pytest.raises(KeyboardInterrupt):
            _build(root, out)
    assert not json.loads((out / "syn2nat/manifest.json").read_text())["complete"]


def _same_as_fresh(result, root: Path, tmp_path: Path) -> None:
    fresh = _build(root, tmp_path / "fresh")
    built = Path(result.out_dir)
    assert tar_bytes(built) == tar_bytes(tmp_path / "fresh/syn2nat")
    assert result.manifest["shards"] == fresh.manifest["shards"]
    assert result.manifest["counts"] == fresh.manifest["counts"]
    assert result.manifest["complete"] and corruptgen.verify(built).ok


CHANGES = {
    "modify": lambda root: _photo(root / "img_001.bmp", 8),  # a finished chunk's input is another picture now
    "add": lambda root: _photo(root / "img_000a.bmp", 7),  # sorts second: every later input moves by one
    "remove": lambda root: (root / "img_002.bmp").unlink(),  # every later input moves back by one
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_resume_after_the_source_changed_equals_a_fresh_build(tmp_path, monkeypatch, change):
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    _interrupted(root, out, monkeypatch, stop_at=2)
    CHANGES[change](root)
    result = _build(root, out)
    assert result.written_shards >= 2
    _same_as_fresh(result, root, tmp_path)


def test_rerun_of_a_finished_build_renders_what_changed_in_its_source(tmp_path, capsys):
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    _build(root, out)
    assert _build(root, out).written_shards == 0
    _photo(root / "img_003.bmp", 8)
    result = _build(root, out)
    assert (result.written_shards, result.reused_shards) == (2, 4)
    err = capsys.readouterr().err
    assert "the source changed since 2 shards were rendered (1 input modified: img_003); rendering them again" in err
    _same_as_fresh(result, root, tmp_path)


def test_verify_source_names_the_shards_whose_inputs_changed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the build records imagefolder:photos, found from here
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    _build(root, out)
    build = str(out / "syn2nat")
    assert main(["verify", build, "--source"]) == 0
    assert "verify OK" in capsys.readouterr().out
    target = root / "img_004.bmp"
    before = target.stat()
    _photo(target, 8)  # same size; the old modification time is put back: only the bytes tell
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert main(["verify", build]) == 0
    capsys.readouterr()
    assert main(["verify", build, "--source"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:-1] == ["source changed: 1 input modified: img_004",
                          "source changed: 2 shards to render again (re-run the build): data/clean/test-00002.tar, "
                          "data/posterize/test-00002.tar"], lines  # fmt: skip
    assert "verify FAILED" in lines[-1] and "2 shards stale against the source" in lines[-1]


def test_verify_source_of_a_hub_build_reads_its_manifest_once(tmp_path, monkeypatch, capsys):
    """``verify hf:owner/name --source`` checks the source against the manifest the shard check read (the Hub id
    is no local path to read it from a second time)."""
    import corruptgen.engine.manifest as manifest

    monkeypatch.chdir(tmp_path)
    root, out = _photos(tmp_path / "photos", 3), tmp_path / "out"
    _build(root, out)
    monkeypatch.setattr(manifest, "hub_url", lambda repo, revision=None: (out / "syn2nat").as_uri())
    assert main(["verify", "hf:owner/name", "--source"]) == 0
    assert "verify OK" in capsys.readouterr().out


def test_a_build_by_an_earlier_corruptgen_resumes(tmp_path, monkeypatch, capsys):
    """Shards recorded without source fingerprints (every build before them) are kept while the source has as many
    inputs as then, and rendered again when it has not."""
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    path = out / "syn2nat/manifest.json"

    def forget_fingerprints() -> None:
        manifest = json.loads(path.read_text())
        for record in manifest["shards"].values():
            record.pop("source", None)
        path.write_text(json.dumps(manifest))

    _interrupted(root, out, monkeypatch, stop_at=2)
    forget_fingerprints()
    result = _build(root, out)
    assert (result.written_shards, result.reused_shards) == (2, 4)
    assert "no source fingerprint" in capsys.readouterr().err
    forget_fingerprints()
    _photo(root / "img_000a.bmp", 7)
    result = _build(root, out)
    assert (result.written_shards, result.reused_shards) == (8, 0)
    _same_as_fresh(result, root, tmp_path)


@pytest.mark.parametrize("code", [errno.ENOENT, errno.EIO])
def test_an_input_that_could_not_be_read_is_read_again_by_the_next_run(tmp_path, monkeypatch, code):
    root, out = _photos(tmp_path / "photos", 6), tmp_path / "out"
    target, real_open = str(root / "img_003.bmp"), os.open

    def flaky_open(path, *args, **kwargs):
        if os.fspath(path) == target:
            raise OSError(code, os.strerror(code), path)
        return real_open(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", flaky_open)
        first = _build(root, out)
    assert first.manifest["counts"]["skipped_inputs"] == 1 and "img_003" in first.skipped[0]["reason"]
    result = _build(root, out)
    assert (result.written_shards, result.reused_shards) == (2, 4)
    _same_as_fresh(result, root, tmp_path)


def test_an_input_missing_for_good_is_not_rendered_again(tmp_path):
    root = _photos(tmp_path / "photos", 3)
    (root / "list.txt").write_text("img_000.bmp\nimg_001.bmp\ngone.bmp\nimg_002.bmp\n")
    kw = dict(source=f"filelist:{root / 'list.txt'}", out=tmp_path / "out", subsets="posterize", card=False)
    assert corruptgen.build("syn2nat", **kw).skipped_inputs == 1
    again = corruptgen.build("syn2nat", **kw)
    assert (again.written_shards, again.skipped_inputs) == (0, 1)


def test_a_build_inside_its_source_folder_never_reads_itself(tmp_path, capsys):
    root = _photos(tmp_path / "photos", 3)
    for out in (root / "out", root):
        args = ["build", "syn2nat", "--source", f"imagefolder:{root}", "--subsets", "posterize", "--no-progress",
                "--out", str(out)]  # fmt: skip
        assert main(args) == 0
        assert (out / "syn2nat/images/sample_grid.png").exists()
        assert main(args) == 0
        summary = capsys.readouterr().out.strip().splitlines()[-1]
        assert "x 3 inputs" in summary and "(0 written, 2 reused)" in summary, summary
    code = main(["build", "syn2nat", "--source", f"imagefolder:{root}/syn2nat/images", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "corruptgen build directory" in err and len(err.strip().splitlines()) == 1, err


def test_a_source_whose_size_moved_the_default_shard_size_is_refused_with_the_way_to_resume(tmp_path, capsys):
    root, out = _photos(tmp_path / "photos", 3), tmp_path / "out"
    kw = dict(source=f"imagefolder:{root}", out=out, subsets="posterize", card=False)
    corruptgen.build("syn2nat", shard_size=16, **kw)
    _photo(root / "img_003.bmp", 3)
    with pytest.raises(corruptgen.CorruptgenError, match=r"4 inputs now .* --shard-size 16 resumes"):
        corruptgen.build("syn2nat", shard_size=17, **kw)  # what the default does past 128 inputs
    assert corruptgen.build("syn2nat", shard_size=16, **kw).written_shards == 2

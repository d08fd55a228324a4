"""``build`` writes the dataset card itself: every config loads right after a build (local or fsspec output), the card
follows added subsets and resumed builds, a card written with options is kept, ``--no-card`` skips it."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from huggingface_hub import DatasetCard
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.hub import card as card_mod
from corruptgen.hub import figures


def _configs(readme: str) -> set[str]:
    return {c["config_name"] for c in DatasetCard(readme).data.to_dict()["configs"]}


def test_cli_build_writes_the_card_and_every_config_loads(tmp_path, hf_cache):
    out = tmp_path / "X"
    assert main(["build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--out", str(out), "--no-progress"]) == 0
    root = out / "syn2nat"
    assert _configs((root / "README.md").read_text()) == {"clean", "solarize"}
    for name in ("solarize", "clean"):
        ds = datasets.load_dataset(str(root), name=name, split="test", cache_dir=hf_cache)
        assert ds.num_rows == 2 and ds[0]["json"]["subset"] == name
        assert ds.features["cls"].int2str(ds.filter(lambda r: r["cls"] >= 0)[0]["cls"]) == "tabby cat"  # chelsea
    assert (root / card_mod.GRID).is_file()

    bare = tmp_path / "bare"
    assert main(["build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--out", str(bare), "--no-progress",
                 "--no-card"]) == 0  # fmt: skip
    assert not (bare / "syn2nat" / "README.md").exists() and not (bare / "syn2nat" / "images").exists()


def test_card_follows_added_subsets_and_a_resumed_build(tmp_path, hf_cache):
    kw = {"out": tmp_path, "limit": 2, "progress": False}
    root = corruptgen.build("syn2nat", subsets="solarize", **kw).out_dir
    assert _configs((root / "README.md").read_text()) == {"clean", "solarize"}
    corruptgen.build("syn2nat", subsets="solarize,posterize", overwrite=True, **kw)
    assert _configs((root / "README.md").read_text()) == {"clean", "solarize", "posterize"}
    ds = datasets.load_dataset(str(root), name="posterize", split="test", cache_dir=hf_cache)
    assert ds.num_rows == 2

    # an interrupted build: no card yet, a shard missing, the manifest not complete
    (root / "README.md").unlink()
    (root / "data/posterize/test-00000.tar").unlink()
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    result = corruptgen.build("syn2nat", subsets="solarize,posterize", **kw)
    assert result.written_shards == 1
    marker = card_mod.card_marker(root)
    assert marker["plan_id"] == result.manifest["plan_id"]
    assert marker["manifest_sha256"] == card_mod.hashlib.sha256((root / "manifest.json").read_bytes()).hexdigest()
    assert _configs((root / "README.md").read_text()) == {"clean", "solarize", "posterize"}


def test_a_card_written_with_options_is_kept_by_a_rebuild(tmp_path):
    kw = {"out": tmp_path, "subsets": "solarize", "limit": 1, "progress": False}
    root = corruptgen.build("syn2nat", **kw).out_dir
    assert main(["card", str(root), "--license", "cc-by-4.0"]) == 0
    corruptgen.build("syn2nat", **kw)  # nothing to render: the manifest and so its card are unchanged
    assert DatasetCard.load(root / "README.md").data.license == "cc-by-4.0"


def test_a_remote_build_writes_its_card(tmp_path):
    import fsspec

    url = "memory://card-test/out"
    corruptgen.build("syn2nat", out=url, subsets="solarize", limit=2, progress=False)
    fs = fsspec.filesystem("memory")
    readme = fs.cat_file("/card-test/out/syn2nat/README.md").decode()
    assert _configs(readme) == {"clean", "solarize"} and "<!-- corruptgen-card: plan_id=" in readme
    assert fs.cat_file("/card-test/out/syn2nat/images/sample_grid.png")[:4] == b"\x89PNG"
    assert card_mod.card_marker(f"{url}/syn2nat")["manifest_sha256"] in readme


def test_class_folders_become_class_label_names(tmp_path, hf_cache):
    for name, colour in (("cat", (200, 120, 40)), ("dog", (40, 90, 200))):
        for i in range(2):
            path = tmp_path / "src" / name / f"{name}{i}.jpg"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (64, 48), colour).save(path)
    root = corruptgen.build("syn2nat", source=f"imagefolder:{tmp_path / 'src'}", out=tmp_path / "out",
                            subsets="solarize", progress=False).out_dir  # fmt: skip
    ds = datasets.load_dataset(str(root), name="solarize", split="test", cache_dir=hf_cache)
    assert ds.features["cls"].names == ["cat", "dog"]
    assert sorted(ds.features["cls"].int2str(c) for c in ds["cls"]) == ["cat", "cat", "dog", "dog"]


def test_figures_are_matplotlib_plots_with_axes_and_a_real_delta_glyph(monkeypatch):
    from matplotlib import font_manager, ft2font

    drawn = []
    real_png = figures._png
    monkeypatch.setattr(figures, "_png", lambda fig, **kw: drawn.append(fig) or real_png(fig, **kw))
    png = figures.delta_v_histogram({"gaussian_noise": [i / 300 for i in range(300)], "fog": [0.5] * 30})
    assert png[:4] == b"\x89PNG"
    (fig,) = drawn
    axes = [ax for ax in fig.axes if ax.axison]
    assert len(axes) == 2 and axes[0].get_xlabel() == "Δv = max(0, 1 − VIF)" and axes[0].get_ylabel()
    assert axes[0].get_title() == "gaussian_noise (n = 300)" and len(axes[0].patches) == figures.DELTA_V_BINS
    assert max(p.get_height() for p in axes[1].patches) == 30  # all 30 values of fog in one bin
    label = axes[0].xaxis.label
    path = font_manager.findfont(label.get_fontproperties(), fallback_to_default=False)
    assert Path(path).name.startswith("DejaVuSans") and ft2font.FT2Font(path).get_char_index(ord("Δ")) != 0


@pytest.mark.parametrize("inputs,size,shards", [(1, 16, 1), (10, 16, 1), (100, 16, 7), (128, 16, 8), (130, 17, 8),
                                                (5000, 625, 8), (50_000, 1000, 50)])  # fmt: skip
def test_default_shard_size_gives_readers_enough_shards(inputs, size, shards):
    from corruptgen.engine.planning import default_shard_size

    assert default_shard_size(inputs) == size and -(-inputs // size) == shards


def test_make_plan_sizes_shards_from_the_source_and_an_explicit_size_wins(tmp_path):
    for i in range(130):
        path = tmp_path / "many" / f"img{i:03d}.jpg"
        path.parent.mkdir(exist_ok=True)
        Image.new("RGB", (8, 8), (i, 0, 0)).save(path)
    source = f"imagefolder:{tmp_path / 'many'}"
    assert corruptgen.make_plan("syn2nat", source=source).shard_size == 17  # 130 inputs -> 8 shards per subset
    assert corruptgen.make_plan("syn2nat", source=source, limit=40).shard_size == 16
    assert corruptgen.make_plan("syn2nat", source=source, shard_size=1000).shard_size == 1000


def test_a_build_whose_inputs_are_all_skipped_fails_without_a_card(tmp_path):
    (tmp_path / "bad").mkdir()
    for i in range(2):
        (tmp_path / "bad" / f"broken{i}.jpg").write_bytes(b"not a jpeg")
    out = tmp_path / "out"
    # no samples: an error (issue N4)
    assert main(["build", "syn2nat", "--source", f"imagefolder:{tmp_path / 'bad'}", "--subsets", "solarize",
                 "--out", str(out), "--no-progress"]) == 2  # fmt: skip
    assert json.loads((out / "syn2nat/manifest.json").read_text())["counts"]["skipped_inputs"] == 2
    assert not (out / "syn2nat/README.md").exists()

"""Dataset cards: Hub metadata validity, declared features, every config loadable with `datasets` (also streaming)."""

from __future__ import annotations

import json
import tarfile

import datasets
import pytest
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData, metadata_load

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.hub import card as card_mod
from corruptgen.hub.features import JSON, NULL, type_of, unify

BENCHMARKS = corruptgen.list_benchmarks()
_HUB_SIZE_CATEGORIES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B",
                        "n>1B"}  # fmt: skip


def _declared(root) -> tuple[dict, DatasetInfosDict, MetadataConfigs]:
    card = DatasetCard.load(root / "README.md")
    return card.data.to_dict(), DatasetInfosDict.from_dataset_card_data(card.data), \
        MetadataConfigs.from_dataset_card_data(card.data)  # fmt: skip


def test_card_metadata_is_valid_hub_metadata(syn2nat_carded):
    root = syn2nat_carded
    manifest = json.loads((root / "manifest.json").read_text())
    meta = metadata_load(root / "README.md")
    assert DatasetCardData(**meta).to_dict() == meta  # round-trips through huggingface_hub's card data
    card = DatasetCard.load(root / "README.md")
    assert card.data.to_dict() == meta and card.text.lstrip().startswith("# ImageNet-Syn2Nat")  # the title first
    assert card.text.rstrip().endswith("-->") and card_mod.card_marker(root)["plan_id"] == manifest["plan_id"]
    assert meta["license"] == "bsd-3-clause" and meta["task_categories"] == ["image-classification"]
    assert meta["task_ids"] == ["multi-class-image-classification"] and meta["source_datasets"] == ["extended"]
    assert "arxiv:2107.12052" in meta["tags"] and "(https://arxiv.org/abs/2107.12052)" in card.text
    assert meta["size_categories"] == ["n<1K"] and set(meta["size_categories"]) <= _HUB_SIZE_CATEGORIES
    assert "webdataset" in meta["tags"] and meta["pretty_name"].startswith("ImageNet-Syn2Nat")
    _, infos, configs = _declared(root)
    assert set(configs) == set(infos) == set(manifest["subsets"])  # one config per subset
    defaults = [name for name, c in configs.items() if c.get("default")]
    assert defaults == ["solarize"]
    for name, cfg in configs.items():
        assert cfg["data_files"] == [{"split": "test", "path": f"data/{name}/test-*.tar"}]
        info = infos[name]
        assert info.splits["test"].num_examples == manifest["subsets"][name]["samples"] == 10
        nbytes = sum(manifest["shards"][r]["bytes"] for r in manifest["subsets"][name]["shards"])
        assert info.splits["test"].num_bytes == nbytes > 0
        feats = info.features
        assert isinstance(feats["jpg"], datasets.Image) and isinstance(feats["cls"], datasets.ClassLabel)
        assert feats["cls"].num_classes == 1000 and feats["cls"].int2str(281) == "tabby cat"
        assert feats["cls"].int2str(657) == "missile (n03773504)"  # ImageNet's two 'missile' classes told apart
        assert feats["json"]["seed"] == datasets.Value("int64") and feats["json"]["label"] == datasets.Value("int64")
        assert feats["json"]["severity"] == datasets.Value("int64")  # null everywhere: its known type
    # per-config params: declared from the samples of that subset
    assert set(infos["affines"].features["json"]["params"]) == {"fill", "interpolation", "matrix", "rotate", "scale"}
    assert infos["posterize"].features["json"]["params"] == {"num_bits": datasets.Value("int64")}
    assert isinstance(infos["clean"].features["json"]["params"], datasets.Json)  # {}: no fields
    circles = infos["random_sun_flare"].features["json"]["params"]["circles"]  # records of one type each
    ints = datasets.List(datasets.Value("int64"))
    record = {"alpha": datasets.Value("float64"), "center": ints, "color": ints, "radius": datasets.Value("int64")}
    assert circles == datasets.List(record)
    assert (root / card_mod.GRID).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    body = card.text
    for needle in (
        "## Subsets",
        "Laugros",
        "2107.12052",
        "plan id",
        "corruptgen.load(",
        "torch_loader",
        "scikit-image data licences",
        "![sample grid](images/sample_grid.png)",
        "the command that made it",
    ):
        assert needle in body, needle
    assert manifest["plan_id"] in body and "corruptgen build syn2nat --source samples\n" in body
    readme = (root / "README.md").read_text()  # the 1000 names are written once, the other configs alias them
    assert readme.count("'281': tabby cat") == 1  # a config aliases the names or its whole (equal) feature block
    assert readme.count("names: *id001") + readme.count("features: *") == len(configs) - 1
    yaml_text = readme.split("\n---\n", 1)[0]
    listed = yaml_text.split("dataset_info:")[0].splitlines()
    assert sum(line.startswith("- {config_name: ") for line in listed) == len(configs)  # one line each
    assert yaml_text.index("configs:") < yaml_text.index("dataset_info:") and len(yaml_text.splitlines()) < 250
    body = readme.split("\n---\n", 1)[1].lstrip()
    assert body.startswith("# ImageNet-Syn2Nat") and body.index("| subsets | 19 configs: 18 corruptions") < 400


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_config_loads_with_datasets_and_streaming(benchmark, family_dirs, hf_cache):
    root = family_dirs[benchmark]
    manifest = json.loads((root / "manifest.json").read_text())
    _, infos, configs = _declared(root)
    expected = {n for n, s in manifest["subsets"].items() if s["samples"] > 0}
    assert set(configs) == expected
    names = sorted(configs)
    step = max(1, len(names) // 4)  # every config is declared (above); clean + ~5 spread over them load twice
    for name in sorted({"clean", *names[::step]} & set(names)):
        declared = infos[name].features
        ds = datasets.load_dataset(str(root), name=name, split="test", cache_dir=hf_cache)
        assert ds.num_rows == manifest["subsets"][name]["samples"], name
        assert ds.features == declared, name
        streamed = datasets.load_dataset(str(root), name=name, split="test", streaming=True, cache_dir=hf_cache)
        rows = list(streamed)
        assert len(rows) == ds.num_rows, name
        assert set(rows[0]) == set(declared), name
        assert rows[0]["json"]["subset"] == name and rows[0]["__key__"] == ds[0]["__key__"]


def test_declared_values_match_the_shards(syn2nat_carded, hf_cache):
    """Typed (non-json) fields come back exactly as written in the sample json."""
    root = syn2nat_carded
    ds = datasets.load_dataset(str(root), name="affines", split="test", cache_dir=hf_cache)
    with tarfile.open(root / "data/affines/test-00000.tar") as tar:
        raw = json.loads(tar.extractfile("chelsea.json").read())
        cls = int(tar.extractfile("chelsea.cls").read())
    row = next(r for r in ds if r["__key__"] == "chelsea")
    assert row["json"]["params"] == raw["params"] and row["json"]["seed"] == raw["seed"] and row["cls"] == cls == 281
    assert row["jpg"].size == (224, 224)


def test_type_unification():
    assert unify(type_of(1), type_of(2.5)) == ("float",)
    assert unify(NULL, type_of("a")) == ("str",)
    assert unify(type_of([1, 2]), type_of([0.5])) == ("list", ("float",))
    assert type_of([0.1, [1, 2]]) == ("list", JSON)
    assert unify(type_of({"a": 1}), type_of({"b": "x"})) == ("struct", {"a": ("int",), "b": ("str",)})
    assert unify(type_of(1), type_of("x")) == JSON


def test_licences():
    imagenet = card_mod.licence_for({"source": {"kind": "imagefolder", "layout": "imagenet-val", "spec": "x"}})
    assert imagenet.yaml["license"] == "other" and imagenet.yaml["license_name"] == "imagenet-terms-of-access"
    assert "ImageNet Terms of Access" in imagenet.yaml["extra_gated_prompt"] and imagenet.source == "imagenet"
    hf = card_mod.licence_for({"source": {"kind": "hf", "name": "ILSVRC/imagenet-1k", "spec": "hf:ILSVRC/imagenet-1k"}})
    assert hf.source == "imagenet"
    unknown = card_mod.licence_for({"source": {"kind": "imagefolder", "layout": None, "spec": "imagefolder:/x"}})
    assert unknown.yaml == {"license": "other"} and "must state it" in unknown.text
    stated = card_mod.licence_for({"source": {"kind": "imagefolder", "spec": "imagefolder:/x"}}, license="cc-by-4.0")
    assert stated.yaml == {"license": "cc-by-4.0"} and "cc-by-4.0" in stated.text


def test_card_cli_licence_option_and_frost_note(syn2nat_copy, capsys):
    from corruptgen.cli import main

    manifest = json.loads((syn2nat_copy / "manifest.json").read_text())
    manifest["source"] = {**manifest["source"], "kind": "imagefolder", "layout": None, "spec": "imagefolder:/data"}
    (syn2nat_copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["card", str(syn2nat_copy), "--license", "cc-by-4.0", "--no-images"]) == 0
    meta = metadata_load(syn2nat_copy / "README.md")
    assert meta["license"] == "cc-by-4.0" and "wrote README.md" in capsys.readouterr().out
    text = (syn2nat_copy / "README.md").read_text()
    assert "/data" not in text.split("## How it was generated")[1].split("## Loading")[0]  # no local paths
    assert "imagefolder:<path-to-images>" in text and not (syn2nat_copy / "images").exists()
    if "imagenet-c" in BENCHMARKS:
        build = corruptgen.build("imagenet-c", out=syn2nat_copy.parent / "inc", limit=1, subsets="frost_s1")
        text = card_mod.render_card(build.out_dir, images=False).text
        assert "unknown licence" in text and "Hendrycks" in text and "1903.12261" in text
        assert text.count("frost texture") == 1 and "(see above when" not in text  # the licence note once


def test_card_refuses_incomplete_build(syn2nat_copy):
    manifest = json.loads((syn2nat_copy / "manifest.json").read_text())
    (syn2nat_copy / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    with pytest.raises(CorruptgenError, match="incomplete"):
        card_mod.render_card(syn2nat_copy)


def test_every_family_has_a_template():
    names = {p.stem for p in card_mod.TEMPLATE_DIR.glob("*.md")}
    assert {"syn2nat", "imagenet-c", "imagenet-p", "vcr", "opticsbench", "opticsbench-rg", "generic"} <= names
    placeholders = {"pretty_name", "summary", "subsets", "figures", "generation", "loading", "evaluation", "license"}
    for path in card_mod.TEMPLATE_DIR.glob("*.md"):
        used = set(card_mod._PLACEHOLDER.findall(path.read_text()))
        assert placeholders <= used, path.name
        card_mod.fill_template(path.read_text(), dict.fromkeys(used, "x"))


def test_delta_v_histogram_and_coverage():
    import numpy as np

    values = list(np.linspace(0, 1, 2000))
    assert card_mod.delta_v_coverage(values) == 1.0 and card_mod.delta_v_coverage(values[:100]) == 0.05
    png = card_mod.delta_v_histogram({"gaussian_noise": values, "fog": values[:500]})
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def _add_delta_v(root, subsets, rng) -> None:
    """Rewrite ``subsets``' shards with a ``params.delta_v`` per sample (as a VCR build records it); their records
    lose the facts the build wrote, as in a build made before corruptgen recorded them (the card reads the samples)."""
    from corruptgen.io.codec import dump_json
    from corruptgen.io.shards import ShardWriter
    from corruptgen.io.tarread import iter_samples

    manifest = json.loads((root / "manifest.json").read_text())
    for name in subsets:
        for rel in manifest["subsets"][name]["shards"]:
            samples = list(iter_samples(root / rel, lambda f: True))
            writer = ShardWriter(root / rel)
            for key, fields in samples:
                meta = json.loads(fields["json"])
                meta["params"]["delta_v"] = float(rng.uniform(0, 1))
                writer.add(key, {**fields, "json": dump_json(meta)})
            manifest["shards"][rel].update(writer.commit())
            del manifest["shards"][rel]["facts"]
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_delta_v_figure_and_table(syn2nat_copy):
    import numpy as np

    _add_delta_v(syn2nat_copy, ["solarize", "posterize"], np.random.default_rng(0))
    card = card_mod.render_card(syn2nat_copy)
    assert set(card.assets) == {card_mod.GRID, card_mod.DELTA_V}
    assert "![Δv histogram](images/delta_v_histogram.png)" in card.text
    assert "| `solarize` | 10 |" in card.text and "| `posterize` | 10 |" in card.text
    # 10 samples in 40 bins: a default evaluation estimates no VCR curve there, and the card says so
    assert "estimates no VCR curve for a subset covered less" in card.text and "`posterize` (0%)" in card.text
    infos = DatasetInfosDict.from_dataset_card_data(DatasetCard(card.text).data)
    assert infos["posterize"].features["json"]["params"]["delta_v"] == datasets.Value("float64")


def test_unlabelled_imagefolder_source(photo_folder, tmp_path, hf_cache):
    build = corruptgen.build("syn2nat", source=f"imagefolder:{photo_folder}", out=tmp_path, subsets="solarize")
    card = card_mod.write_card(build.out_dir, images=False)
    assert card.metadata["license"] == "other" and "must state it" in card.text
    assert "cls" not in card.schemas["solarize"].fields and 'row["cls"]' not in card.text
    assert str(photo_folder) not in card.text  # local paths stay private
    ds = datasets.load_dataset(str(build.out_dir), name="solarize", split="test", cache_dir=hf_cache)
    assert ds.num_rows == 7 and "cls" not in ds.features

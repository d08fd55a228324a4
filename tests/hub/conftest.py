"""Builds shared by the hub tests: the default Syn2Nat build and a small build of every other registered family."""

from __future__ import annotations

import functools
import multiprocessing
import shutil
from pathlib import Path

import pytest

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.hub import stream

#: Small family options per benchmark (2 source images): a family not listed is built with its defaults.
FAMILY_OPTIONS: dict[str, dict] = {
    "imagenet-c": {"severities": "3"},
    "vcr": {"per_image": 1},
    "opticsbench": {"severities": "3"},
    "opticsbench-rg": {"severities": "3"},
    "cifar10-c": {"severities": "3"},
    "cifar100-c": {"severities": "3"},
    "tinyimagenet-c": {"severities": "3"},
    "imagenet64-c": {"severities": "3"},
    # a tiny surrogate (tests/tiny_models.py) and two cheap attacks, one with a target class, instead of EfficientNet
    "adversarial": {"surrogate": "tiny_models:TinySurrogate", "attacks": "fgsm_ll:eps=0.04,cw_l2:steps=5"},
}


@pytest.fixture(autouse=True)
def loader_workers_from_a_preloaded_forkserver(request, monkeypatch):
    """``torch_loader`` workers start from one forkserver that has imported torch and corruptgen (as a training
    script's own imports give it) instead of each as a fresh interpreter (``spawn``, the default: ~1 s of CPU per
    worker importing torch); tests marked ``loader_default`` keep the default, which they test."""
    if request.node.get_closest_marker("loader_default") is None:
        monkeypatch.setattr(stream, "START_METHOD", _preloaded_forkserver())


@functools.cache
def _preloaded_forkserver():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["corruptgen.hub.sized"])
    return context


@pytest.fixture(scope="session", autouse=True)
def fast_yaml():
    """Parse card YAML with libyaml when available (same documents, ~5x faster than the pure-Python parser
    huggingface_hub uses): loading a config parses the whole card, once per call."""
    import types

    import huggingface_hub.repocard as repocard
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        yield
        return
    shim = types.SimpleNamespace(**{k: getattr(yaml, k) for k in dir(yaml) if not k.startswith("__")})
    shim.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
    original = repocard.yaml
    repocard.yaml = shim
    try:
        yield
    finally:
        repocard.yaml = original


@pytest.fixture(scope="session")
def hub_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hub")


@pytest.fixture(scope="session")
def hf_cache(hub_root) -> str:
    """A private `datasets` cache directory (nothing is written to the user's cache)."""
    path = hub_root / "hf-cache"
    path.mkdir(exist_ok=True)
    return str(path)


@pytest.fixture(scope="session")
def syn2nat_pristine(hub_root) -> Path:
    """The default Syn2Nat build (19 subsets x 10 photographs), without a card (``card=False``)."""
    return corruptgen.build("syn2nat", out=hub_root / "pristine", card=False).out_dir


@pytest.fixture(scope="session")
def syn2nat_carded(syn2nat_pristine, hub_root) -> Path:
    """A copy of the default Syn2Nat build with its card written (shared, read-only for the tests)."""
    from corruptgen.hub import write_card

    dest = hub_root / "carded" / "syn2nat"
    shutil.copytree(syn2nat_pristine, dest)
    write_card(dest)
    return dest


@pytest.fixture
def syn2nat_copy(syn2nat_pristine, tmp_path) -> Path:
    """A private copy of the default Syn2Nat build (tests may write into it)."""
    dest = tmp_path / "syn2nat"
    shutil.copytree(syn2nat_pristine, dest)
    return dest


@pytest.fixture(scope="session")
def sharded_build(hub_root) -> Path:
    """Syn2Nat with 3 samples per shard: 4 shards per subset (3 subsets), for worker / node splitting."""
    return corruptgen.build("syn2nat", out=hub_root / "sharded", subsets="solarize,posterize", shard_size=3).out_dir


def family_build(benchmark: str, root: Path) -> Path:
    """A 2-image build of ``benchmark``, with the card the build itself writes (no separate card step)."""
    out = root / "families"
    if benchmark == "syn2nat":
        return None  # covered by syn2nat_carded
    options = FAMILY_OPTIONS.get(benchmark, {})
    try:
        result = corruptgen.build(benchmark, out=out, limit=2, **options)
    except CorruptgenError:
        result = corruptgen.build(benchmark, out=out, limit=2, overwrite=True)
    return result.out_dir


class _FamilyDirs(dict):
    """Build directory per benchmark, each built on first access (an xdist worker builds only the families its
    tests use)."""

    def __init__(self, root: Path, syn2nat: Path) -> None:
        super().__init__(syn2nat=syn2nat)
        self.root = root

    def __missing__(self, name: str) -> Path:
        self[name] = family_build(name, self.root)
        return self[name]


@pytest.fixture(scope="session")
def family_dirs(hub_root, syn2nat_carded) -> dict[str, Path]:
    """Build directories of every registered benchmark with their cards (Syn2Nat: the full default build)."""
    return _FamilyDirs(hub_root, syn2nat_carded)

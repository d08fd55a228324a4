"""Model specs: the default offline model, module:attribute forms, TorchScript, guarded torchvision/timm."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import torch
from eval_helpers import photo

from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.models import load_model


@pytest.fixture(scope="module")
def default_model():
    return load_model("efficientnet_lite0")


def test_default_model_is_offline_and_normalises_to_minus_one_one(default_model):
    m = default_model
    assert (m.input_size, m.mean, m.std, m.num_classes) == (224, (0.5, 0.5, 0.5), (0.5, 0.5, 0.5), 1000)
    assert len(m.weights["sha256"]) == 64
    x = torch.from_numpy(np.stack([photo("coffee"), photo("chelsea")]))
    logits = m(x)
    assert logits.shape == (2, 1000)
    assert logits.argmax(1).tolist()[0] == 967  # espresso
    assert logits.argmax(1).tolist()[1] in range(281, 286)  # a cat
    white = m.preprocess(torch.full((1, 224, 224, 3), 255, dtype=torch.uint8))
    assert torch.allclose(white, torch.ones_like(white))


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "cg_user_models.py").write_text(
        textwrap.dedent("""
        import torch

        class Net(torch.nn.Module):
            input_size = 32
            mean = (0.0, 0.0, 0.0)
            std = (1.0, 1.0, 1.0)
            def forward(self, x):
                return torch.stack([x.mean((1, 2, 3)), -x.mean((1, 2, 3)), x[:, 0].mean((1, 2))], 1)

        net = Net()

        def make():
            return Net()

        def on_batches(x):
            return x.flatten(1)[:, :7]
        on_batches.input_size = 16
        not_a_model = 3
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def test_module_attribute_forms(user_module):
    images = torch.full((2, 40, 40, 3), 255, dtype=torch.uint8)
    for spec in ("cg_user_models:net", "cg_user_models:Net", "cg_user_models:make"):
        m = load_model(spec)
        assert m.input_size == 32 and m.std == (1.0, 1.0, 1.0)
        out = m(images)  # resized 40 -> 32, scaled to [0, 1]
        assert out.shape == (2, 3) and torch.allclose(out[:, 0], torch.ones(2))
    fn = load_model("mine=cg_user_models:on_batches")
    assert fn.name == "mine" and fn.input_size == 16 and fn.mean == (0.485, 0.456, 0.406)
    assert fn(images).shape == (2, 7)
    with pytest.raises(CorruptgenError, match="not a torch module or a callable"):
        load_model("cg_user_models:not_a_model")
    with pytest.raises(CorruptgenError, match="has no attribute 'missing'"):
        load_model("cg_user_models:missing")
    with pytest.raises(CorruptgenError, match="cannot import module"):
        load_model("no_such_module_xyz:net")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_with_declared_input(tmp_path):
    class Tiny(torch.nn.Module):
        def forward(self, x):
            return x.mean((2, 3))

    path = tmp_path / "tiny.pt"
    cfg = {"input_size": 48, "mean": [0, 0, 0], "std": [1, 1, 1], "num_classes": 3}
    torch.jit.save(torch.jit.script(Tiny()), str(path), _extra_files={"corruptgen.json": json.dumps(cfg)})
    m = load_model(f"torchscript:{path}")
    assert (m.name, m.input_size, m.num_classes) == ("tiny", 48, 3) and len(m.weights["sha256"]) == 64
    out = m(torch.full((1, 64, 64, 3), 51, dtype=torch.uint8))
    assert torch.allclose(out, torch.full((1, 3), 0.2), atol=1e-5)
    with pytest.raises(CorruptgenError, match="no TorchScript file"):
        load_model(f"torchscript:{tmp_path / 'nope.pt'}")


@pytest.mark.parametrize("lib", ["torchvision", "timm"])
def test_torchvision_and_timm_are_import_guarded(lib):
    try:
        __import__(lib)
    except Exception:
        with pytest.raises(CorruptgenError, match="does not import here"):
            load_model(f"{lib}:resnet18")
    else:
        pytest.skip(f"{lib} imports here")


def test_unknown_model_lists_the_forms():
    with pytest.raises(UnknownNameError, match=r"built-in \(efficientnet_lite0\), module:attribute, torchscript"):
        load_model("resnet_nope")


def test_module_attribute_from_the_current_directory_without_python_m(tmp_path, monkeypatch):
    """The ``corruptgen`` console script does not put the current directory on sys.path (``python -m`` does): a
    ``mymodule:net`` spec must still import the module from the folder the command runs in."""
    import os
    import sys

    (tmp_path / "cg_cwd_model.py").write_text("import torch\nnet = torch.nn.Sequential(torch.nn.Flatten(), "
                                              "torch.nn.LazyLinear(3))\nnet.input_size = 8\n")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    here = str(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != here])
    monkeypatch.delitem(sys.modules, "cg_cwd_model", raising=False)
    m = load_model("cg_cwd_model:net")
    assert m.name == "net" and m.input_size == 8
    assert m(torch.zeros((2, 8, 8, 3), dtype=torch.uint8)).shape == (2, 3)

"""One registry pattern: every kind of named entry is a :class:`corruptgen.registry.Registry` with near-name errors."""

from __future__ import annotations

import pytest

from corruptgen.commands import COMMANDS, command_groups
from corruptgen.corruptions.registry import CORRUPTIONS
from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.eval.metrics import METRICS, detect_family
from corruptgen.export import LAYOUTS
from corruptgen.family.benchmark import FAMILIES, get_benchmark
from corruptgen.family.preprocess import PRESETS
from corruptgen.io.sources import SOURCES, open_source
from corruptgen.models import MODELS
from corruptgen.registry import Registry


@pytest.mark.parametrize("registry", [CORRUPTIONS, FAMILIES, SOURCES, PRESETS, MODELS, METRICS, COMMANDS, LAYOUTS])
def test_every_lookup_goes_through_one_registry_class(registry):
    assert isinstance(registry, Registry)
    command_groups()  # command groups register when their cli modules are imported
    assert len(registry) > 0
    name = registry.names()[0]
    with pytest.raises(UnknownNameError, match="did you mean"):
        registry.get(name + "x")


def test_every_family_names_a_registered_metric_family_and_preset():
    for name in FAMILIES.names():
        bench = get_benchmark(name)
        assert bench.metrics == "generic" or bench.metrics in METRICS, name
        assert bench.preprocess in PRESETS, name
        assert detect_family(name) == bench.metrics


def test_python_spelling_of_a_family_is_an_alias_of_the_cli_name():
    assert FAMILIES.canonical("imagenet_c") == "imagenet-c"
    assert get_benchmark("imagenet_c") is get_benchmark("imagenet-c")


def test_unknown_source_lists_every_registered_form():
    with pytest.raises(CorruptgenError) as e:
        open_source("fancy:thing")
    for kind in SOURCES.names():
        assert kind in str(e.value)


def test_registering_twice_fails():
    reg: Registry[int] = Registry("number")
    reg.register("one", 1, aliases=("uno",))
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("uno", 2)


def test_every_cli_command_comes_from_a_registered_group():
    from corruptgen.cli import build_parser

    _, handlers = build_parser()
    assert {"build", "list", "select", "verify", "eval", "report", "card", "push", "vif", "coverage", "kernels",
            "bench", "export"} <= set(handlers)  # fmt: skip
    assert "core" in COMMANDS


def test_a_look_up_loads_only_the_module_named_like_it():
    """`corruptgen build imagenet-c` parses without importing the other families (nor torch, nor albumentations):
    a one-family build starts seconds sooner. A fresh interpreter: this test process has every family loaded."""
    import ast
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from corruptgen.cli import parse_args\n"
        "from corruptgen.corruptions import get\n"
        "from corruptgen.family.benchmark import get_benchmark\n"
        "args, _ = parse_args(['build', 'imagenet-c', '--severities', '1', '--limit', '1'])\n"
        "assert args.family_options == ['severities', 'extra'], args.family_options\n"
        "get_benchmark('cifar10-c'); get('imagenet_c/frost')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('corruptgen.families.') and m.count('.') == 2)\n"
        "print(loaded, 'torch' in sys.modules, 'albumentations' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    loaded, torch, albumentations = out[0].rsplit(" ", 2)
    # opticsbench is imported by its own `kernels` command (families/opticsbench/cli.py), without torch
    assert set(ast.literal_eval(loaded)) - {"corruptgen.families.opticsbench"} == {
        "corruptgen.families.cifar10_c", "corruptgen.families.imagenet_c"}, out  # fmt: skip
    assert torch == albumentations == "False", out


def test_a_flag_of_another_family_still_names_the_families_that_take_it(capsys):
    from corruptgen.cli import parse_args

    with pytest.raises(SystemExit):
        parse_args(["build", "imagenet-c", "--per-image", "2", "--bogus"])
    assert "--per-image" not in capsys.readouterr().err.split("unrecognized arguments:")[-1]
    args, _ = parse_args(["build", "imagenet-c", "--per-image", "2"])  # parses; the family then refuses it
    assert args.per_image == 2 and "per_image" in args.family_options

"""One registry pattern: every kind of named entry is a :class:`corruptgen.registry.Registry` with near-name errors."""

from __future__ import annotations

import pytest

from corruptgen.commands import COMMANDS, command_groups
from corruptgen.corruptions.registry import CORRUPTIONS
from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.eval.metrics import METRICS, detect_family
from corruptgen.eval.models import MODELS
from corruptgen.export import LAYOUTS
from corruptgen.family import FAMILIES, get_benchmark
from corruptgen.io.sources import SOURCES, open_source
from corruptgen.preprocess import PRESETS
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

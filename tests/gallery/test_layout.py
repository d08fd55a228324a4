"""The gallery's column rule on subset records of every kind, a family it has never heard of included."""

from __future__ import annotations

from corruptgen.gallery.layout import SubsetInfo, plan_rows, table_columns


def _info(name, corruption, severity=None, category=None, options=None, first=None) -> SubsetInfo:
    return SubsetInfo(name, corruption, severity, category, options or {}, first or {})


def test_each_kind_of_row_gets_its_columns():
    infos = [
        _info("clean", None),
        _info("frost_s1", "imagenet_c/frost", 1, 3),
        _info("frost_s5", "imagenet_c/frost", 5, 3),
        _info("brightness", "vcr/brightness", first={"params": {"delta_v": 0.4}}),
        _info("fgsm_eps2", "adversarial/fgsm", options={"attack": "fgsm", "eps": 2 / 255, "model": "r50"}),
        _info("fgsm_eps8", "adversarial/fgsm", options={"attack": "fgsm", "eps": 8 / 255, "model": "r50"}),
        _info("rotation", "laugros/rotation", category=2, first={"params": {"severity": 35.4, "angle": -35.4}}),
        _info("solarize", "syn2nat/solarize", category=1),
        _info("mystery", None, first={"corruption": "mystery"}),
    ]
    rows = plan_rows(infos, {1: "heterogeneous"})
    kinds = {r.name: r.kind for r in rows}
    assert kinds == {"frost": "severity", "brightness": "delta_v", "fgsm": "options", "rotation": "drawn",
                     "solarize": "category", "mystery": "samples"}  # fmt: skip
    by_name = {r.name: r for r in rows}
    assert [c.label for c in by_name["fgsm"].column_of.values()] == [f"eps={2 / 255}", f"eps={8 / 255}"]
    assert by_name["solarize"].column_of["solarize"].label == "1: heterogeneous"
    ids = [c.id for c in table_columns(rows, clean=True)]
    assert ids[:3] == ["clean", "severity-1", "severity-5"] and ids[-1] == "samples"
    assert ids.index("drawn") < ids.index("category-1") < ids.index("dv-0") < ids.index("dv-9") < ids.index("samples")
    assert len(ids) == len(set(ids)) == 3 + 2 + 1 + 1 + 10 + 1


def test_subsets_of_one_corruption_with_equal_options_are_told_apart_by_name():
    rows = plan_rows([_info("a_run1", "x/a"), _info("a_run2", "x/a")])
    assert [c.label for c in rows[0].column_of.values()] == ["a_run1", "a_run2"]

"""``scripts/cw_readings.py`` (the table of docs/adversarial.md on CW's two readings) runs, on a tiny model here: with
κ = 50 every image it changed reaches a margin of 50 logits, with κ = 0 only crossing the boundary counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cw_readings.py"


def test_the_readings_table_runs_and_kappa_is_the_margin_reached():
    spec = importlib.util.spec_from_file_location("cw_readings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.rows("tiny_models:TinySurrogate", "cw_l2:steps=10,cw_l2:kappa=50,steps=10", ["chelsea", "coffee"], 32)
    (preset, kappa) = rows
    assert preset[0] == "`cw_l2:c=50:kappa=0:steps=10:lr=0.01`" and kappa[0] == "`cw_l2:c=50:kappa=50:steps=10:lr=0.01`"
    for row in rows:
        fooled, same = (int(cell.split("/")[0]) for cell in row[1:3])
        assert fooled + same <= 2
    assert int(preset[1].split("/")[0]) >= 1  # κ = 0: a barely adversarial image still fools once stored in 8 bits
    assert kappa[3] == "–" or float(kappa[3]) >= 50
    table = module.table(rows)
    assert table.count("\n") == 3 and table.startswith("| reading |")

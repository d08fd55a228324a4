"""``corruptgen bench`` on a tiny input: every stage, a ratio, the JSON keys, and one-line errors with exit 2."""

from __future__ import annotations

import json
import sys

import pytest

from corruptgen.bench import format_table, parse_families, run_bench
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError

QUICK = ["--repeats", "1", "--min-seconds", "0"]  # one timed unit per measurement: tests check shapes, not speed


@pytest.fixture(scope="module")
def bench_json(tmp_path_factory) -> dict:
    return run_bench(["syn2nat", "imagenet-c"], images=2, repeats=1, min_run_s=0)


def test_bench_cmd_table_prints_stages_and_ratio(capsys):
    assert main(["bench", "--families", "syn2nat", "--images", "2", *QUICK]) == 0
    out = capsys.readouterr().out
    for stage in ("decode", "corrupt", "encode", "write", "end to end", "baseline A", "peak RSS"):
        assert stage in out, stage
    assert "ratio corrupt / A bare loop" in out
    assert "x  (per CPU-second " in out  # a ratio value such as 0.97x, then the same per CPU-second


def test_bench_cmd_json_stdout(capsys):
    assert main(["bench", "--families", "imagenet-c", "--images", "1", "--json", "-", *QUICK]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("machine", "torch", "settings", "inputs", "families", "peak_rss_mib", "seconds"):
        assert key in data, key
    fam = data["families"]["imagenet-c"]
    for key in ("stages", "end_to_end", "baselines", "ratios", "peak_rss_mib"):
        assert key in fam, key
    assert set(fam["stages"]) == {"decode", "corrupt", "encode", "write"}
    for rec in fam["stages"].values():
        assert rec["images"] > 0 and rec["seconds"] >= 0 and rec["images_per_s"] > 0
    assert fam["stages"]["corrupt"]["images"] == 75
    assert all(rec["cpu_s_per_image"] > 0 and rec["runs"] == 1 for rec in fam["stages"].values())
    assert data["threads"]["torch_threads"] == 1 and "cpu_capability" in data["threads"]
    assert data["inputs"]["count"] == 1
    assert fam["ratios"]["corrupt / B reference"] > 0 and fam["ratios_cpu"]["corrupt / B reference"] > 0
    assert fam["peak_rss_mib"]["self"] > 0


def test_bench_api_two_families(bench_json):
    fams = bench_json["families"]
    assert list(fams) == ["syn2nat", "imagenet-c"]
    assert fams["syn2nat"]["end_to_end"]["samples"] == 2 * 19
    assert all(f["end_to_end"]["fresh_process"] for f in fams.values())  # imports and start-up counted, as a user's
    assert all(v is not None and v > 0 for f in fams.values() for v in f["ratios"].values())
    table = format_table(bench_json)
    assert "ratio corrupt / B reference" in table and "baseline B NumPy reference" in table


def test_bench_cmd_cycles_source(tmp_path, capsys):
    from PIL import Image

    folder = tmp_path / "two_imgs"
    folder.mkdir()
    for i in range(2):
        Image.new("RGB", (300, 260), (40 * i, 90, 200)).save(folder / f"im{i}.png")
    assert main(["bench", "--families", "syn2nat", "--source", f"imagefolder:{folder}", "--images", "3",
                 "--json", "-", *QUICK]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"] == {"source": f"imagefolder:{folder}", "count": 3, "source_count": 2}
    assert data["families"]["syn2nat"]["stages"]["decode"]["images"] == 3  # one unit (all inputs) per run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--families", "nope"], "unknown family 'nope'"),
        (["--families", ""], "--families is empty"),
        (["--images", "0"], "--images expects a positive integer"),
        (["--repeats", "x"], "--repeats expects a positive integer"),
        (["--device", "tpu"], "unknown --device"),
        (["--source", "nowhere:x", "--families", "syn2nat"], "unknown image source"),
    ],
)
def test_bench_cmd_bad_options_exit_2(capsys, argv, message):
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("corruptgen: error:") and message in err[0], err


def test_bench_cmd_cuda_unavailable_one_line(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert main(["bench", "--device", "cuda", "--families", "syn2nat"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CUDA is not available" in err[0]


def test_bench_vcr_without_pyrtools_says_baseline_unavailable(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyrtools", None)  # import pyrtools -> ImportError
    assert main(["bench", "--families", "vcr", "--images", "1", *QUICK]) == 0
    out = capsys.readouterr().out
    assert "vif (batched VIF evaluations)" in out
    assert "baseline unavailable (pip install pyrtools)" in out
    assert "n/a (baseline unavailable)" in out


def test_parse_families():
    assert parse_families(None) == ["syn2nat", "imagenet-c", "vcr", "opticsbench", "eval"]
    assert parse_families("imagenet_c,syn2nat,syn2nat") == ["imagenet-c", "syn2nat"]
    with pytest.raises(CorruptgenError):
        parse_families("syn2nat,bogus")


def test_time_work_runs_until_min_seconds_and_reports_cpu():
    from corruptgen.bench.timing import time_work

    calls = []

    def work() -> int:
        calls.append(1)
        sum(i * i for i in range(20000))  # CPU work
        return 2

    rec = time_work(work, runs=3, min_seconds=0.05)
    assert rec["runs"] == 3 and rec["seconds"] >= 0.05 and rec["images"] % 2 == 0
    assert len(calls) >= 1 + 3 and rec["images"] >= 2  # warm-up + at least one unit per run
    assert rec["images_per_s"] > 0 and 0 < rec["cpu_s_per_image"] < 1


def test_bench_json_file_keeps_finished_families_when_cut_short(tmp_path, monkeypatch):
    """A run stopped in its second family (a time limit, Ctrl-C) leaves the first family's numbers in --json."""
    import corruptgen.bench as bench

    real = bench.bench_family

    def cut_in_second(name, *args, **kwargs):
        if name != "syn2nat":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)

    monkeypatch.setattr(bench, "bench_family", cut_in_second)
    out = tmp_path / "bench.json"
    try:
        main(["bench", "--families", "syn2nat,imagenet-c", "--images", "1", "--json", str(out), *QUICK])
    except KeyboardInterrupt:
        pass
    data = json.loads(out.read_text())
    assert data["complete"] is False and list(data["families"]) == ["syn2nat"]
    assert data["families"]["syn2nat"]["stages"]["corrupt"]["images"] > 0
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]  # no partial file left beside it

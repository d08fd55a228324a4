"""The gallery's page and files against the shards they show: every thumbnail is a stored sample (its sha256, its
bytes), the grid follows the column rule, facts match the manifest, strings from the build are escaped, files are
written once, remote builds read through the one reader."""

from __future__ import annotations

import io
import json
import signal
import tarfile
from pathlib import Path

import pytest
from serving import served
from site_reading import parse_page, sha256, site_record, stored_images, thumbs

import corruptgen
from corruptgen.cli import main
from corruptgen.engine.reader import Build
from corruptgen.errors import CorruptgenError
from corruptgen.gallery import default_out
from corruptgen.quality.coverage import bin_counts


def test_every_thumbnail_is_a_stored_sample_and_rows_compare_the_same_photos(icb, tmp_path):
    site = tmp_path / "site"
    result = corruptgen.gallery(icb, site, per_subset=2)
    stored = stored_images(icb)
    page = parse_page(site)
    shown = thumbs(page)
    assert len(shown) == result.shown == 2 * 2 * 3  # 2 rows x (clean + 2 severities) x 2 photos
    for a in shown:
        data = stored[(a["data-subset"], a["data-key"])]
        assert a["data-sha256"] == sha256(data) and (site / a["href"]).read_bytes() == data
    record = site_record(site)
    assert [c["id"] for c in record["columns"]] == ["clean", "severity-1", "severity-3"]
    assert [r["name"] for r in record["rows"]] == ["gaussian_noise", "frost"]
    for r in range(2):
        per_cell = {}
        for s in record["samples"]:
            if s["row"] == r:
                per_cell.setdefault(s["column"], []).append(s["source_key"])
        assert len({tuple(keys) for keys in per_cell.values()}) == 1, per_cell  # the same photos across a row
    severities = {a["data-subset"]: a["data-severity"] for a in shown}
    assert severities == {"clean": "", "gaussian_noise_s1": "1", "gaussian_noise_s3": "3", "frost_s1": "1",
                          "frost_s3": "3"}  # fmt: skip


def test_facts_state_the_manifest_and_verify(icb, tmp_path):
    corruptgen.gallery(icb, tmp_path / "site")
    manifest = json.loads((icb / "manifest.json").read_text())
    facts = {
        a["id"]: a["data-value"]
        for tag, a in parse_page(tmp_path / "site").tags
        if tag == "tr" and a.get("id", "").startswith("fact-")
    }
    assert facts["fact-plan-id"] == manifest["plan_id"] and facts["fact-family"] == "imagenet-c"
    assert facts["fact-samples"] == "10" and facts["fact-skipped-inputs"] == "0" and facts["fact-verify"] == "ok"
    assert site_record(tmp_path / "site")["facts"]["source"] == "samples"
    corruptgen.gallery(icb, tmp_path / "unverified", verify=False)
    assert site_record(tmp_path / "unverified")["facts"]["verify"] == "not-checked"


def test_thumbnails_are_written_once_and_an_incremental_build_adds_only_its_files(tmp_path):
    out = tmp_path / "out"
    corruptgen.build("imagenet-c", out=out, subsets="gaussian_noise", severities="1", limit=2, size=64,
                     progress=False)  # fmt: skip
    build = out / "imagenet-c"
    first = corruptgen.gallery(build)
    assert first.out == default_out(Build.open(build)) == tmp_path / "out" / "imagenet-c-gallery"
    assert (first.written, first.reused) == (4, 0)
    before = {p.name: p.stat().st_mtime_ns for p in (first.out / "thumbs").iterdir()}
    corruptgen.build("imagenet-c", out=out, subsets="gaussian_noise,frost", severities="1", limit=2, size=64,
                     progress=False)  # fmt: skip
    second = corruptgen.gallery(build)
    assert (second.written, second.reused) == (2, 4)  # frost_s1's two images are new; clean and noise are kept
    after = {p.name: p.stat().st_mtime_ns for p in (second.out / "thumbs").iterdir()}
    assert len(after) == 6 and all(after[name] == mtime for name, mtime in before.items())


def test_vcr_rows_are_binned_by_delta_v_with_the_coverage_histogram(tmp_path):
    corruptgen.build("vcr", out=tmp_path, subsets="brightness", per_image=3, limit=2, size=96, progress=False)
    site = tmp_path / "site"
    corruptgen.gallery(tmp_path / "vcr", site)
    record = site_record(site)
    assert [c["id"] for c in record["columns"]] == ["clean"] + [f"dv-{k}" for k in range(10)]
    metas = [json.loads(f["json"]) for _, f in Build.open(tmp_path / "vcr").iter_samples("brightness", lambda f: True)]
    values = [m["params"]["delta_v"] for m in metas]
    assert record["rows"][0]["histogram"] == bin_counts(values).tolist()
    for s in record["samples"]:
        if s["column"] != "clean":
            assert s["column"] == f"dv-{min(int(s['delta_v'] * 10), 9)}"
    assert sum(s["column"] != "clean" for s in record["samples"]) == len(values) == 6


def _tar(path: Path, samples: dict[str, dict[str, bytes]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as tar:
        for key, fields in samples.items():
            for field, data in fields.items():
                info = tarfile.TarInfo(f"{key}.{field}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def _jpeg(colour: tuple[int, int, int]) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (24, 24), colour).save(buf, format="JPEG")
    return buf.getvalue()


def test_hostile_keys_labels_and_subset_names_are_escaped(tmp_path):
    """Shards made elsewhere (no manifest) with markup in a subset folder, a sample key and the json."""
    evil_subset = "<img src=x onerror=alert(1)>"
    evil_key = '"><script>alert(2)<'
    evil_label = "</script><script>alert(3)</script>"
    meta = {"label_name": evil_label, "corruption": "<b>c</b>", "params": {"note": "&amp; <i>"}}
    fields = {"jpg": _jpeg((200, 30, 30)), "json": json.dumps(meta).encode()}
    _tar(tmp_path / "b/data/clean/test-00000.tar", {evil_key: {"jpg": _jpeg((20, 20, 20))}})
    _tar(tmp_path / f"b/data/{evil_subset}/test-00000.tar", {evil_key: fields})
    site = tmp_path / "site"
    corruptgen.gallery(tmp_path / "b", site)
    page = parse_page(site)
    allowed = "html head meta title link script body header h1 h2 section table tr th td thead tbody span div a img"
    assert {tag for tag, _ in page.tags} <= set(allowed.split())
    assert not [(tag, a) for tag, a in page.tags if any(k.startswith("on") for k in a)]
    assert [a.get("src") for tag, a in page.tags if tag == "script"] == ["gallery.js", None]
    data = json.loads(page.scripts[-1])
    (sample,) = [s for s in data["samples"] if s["subset"] == evil_subset]
    assert sample["key"] == evil_key and sample["meta"]["label_name"] == evil_label
    assert {a["data-subset"] for a in thumbs(page)} == {"clean", evil_subset}
    facts = site_record(site)["facts"]
    assert facts["verify"] == "no-manifest" and facts["samples"] is None and facts["plan-id"] is None


def test_a_remote_build_is_read_through_the_reader(icb, tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    for path in icb.rglob("*"):
        if path.is_file():
            fs.pipe(f"/gallerysrc/{path.relative_to(icb).as_posix()}", path.read_bytes())
    local, remote = (
        corruptgen.gallery(icb, tmp_path / "local"),
        corruptgen.gallery("memory://gallerysrc", tmp_path / "r"),
    )
    assert site_record(tmp_path / "r")["samples"] == site_record(tmp_path / "local")["samples"]
    assert remote.shown == local.shown and site_record(tmp_path / "r")["facts"]["verify"] == "ok"
    assert default_out(Build.open("memory://gallerysrc")) == Path.cwd() / "gallerysrc-gallery"


def test_cli_refuses_the_build_folder_a_foreign_folder_and_bad_counts(icb, tmp_path, capsys):
    assert main(["gallery", str(icb), "--out", str(icb / "site")]) == 2
    assert "never writes into a build" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    assert main(["gallery", str(icb), "--out", str(tmp_path / "mine")]) == 2
    assert "holds no gallery" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["gallery", str(icb), "--per-subset", "0"])
    assert e.value.code == 2
    assert main(["gallery", str(icb), "--out", str(tmp_path / "ok"), "--per-subset", "1", "--no-verify"]) == 0
    assert "6 samples shown" in capsys.readouterr().out  # 2 rows x 3 columns x 1 photo
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(CorruptgenError, match="not a corruptgen results file"):
        corruptgen.gallery(icb, tmp_path / "ok", results=[tmp_path / "other.json"])


def test_serve_answers_on_localhost_until_ctrl_c(icb, tmp_path):
    import urllib.request

    site = tmp_path / "served"
    with served(["gallery", str(icb), "--out", str(site), "--no-verify", "--serve"]) as (proc, url):
        assert url.startswith("http://127.0.0.1:"), url
        page = urllib.request.urlopen(url, timeout=10).read()
        assert page == (site / "index.html").read_bytes()
        thumb = site_record(site)["samples"][0]["thumb"]
        assert urllib.request.urlopen(url + thumb, timeout=10).read() == (site / thumb).read_bytes()
    assert proc.returncode == 0  # Ctrl-C stopped it


def test_a_served_gallery_never_outlives_its_test():
    """A server that ignores Ctrl-C is killed when its test ends (one killed with the test process dies with it)."""
    stubborn = (
        "import signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('serving the gallery at http://127.0.0.1:9/', flush=True)\ntime.sleep(600)\n"
    )
    with served([], child=stubborn, stop_s=0.5) as (proc, url):
        assert url == "http://127.0.0.1:9/" and proc.poll() is None
    assert proc.returncode == -signal.SIGKILL


def test_skipped_inputs_are_listed_with_reasons_and_a_build_without_clean_has_no_clean_column(tmp_path):
    from PIL import Image

    (tmp_path / "photos").mkdir()
    Image.new("RGB", (40, 40), (90, 140, 200)).save(tmp_path / "photos" / "good.jpg")
    (tmp_path / "photos" / "broken.jpg").write_bytes(b"not an image")
    corruptgen.build("imagenet-c", source=f"imagefolder:{tmp_path / 'photos'}", out=tmp_path / "out",
                     subsets="gaussian_noise", severities="1", size=32, clean=False, progress=False)  # fmt: skip
    site = tmp_path / "site"
    corruptgen.gallery(tmp_path / "out" / "imagenet-c", site)
    page = parse_page(site)
    (row,) = [a for tag, a in page.tags if tag == "tr" and a.get("data-key") == "broken"]
    manifest = json.loads((tmp_path / "out" / "imagenet-c" / "manifest.json").read_text())
    assert row["data-reason"] == manifest["skipped"][0]["reason"] and row["data-reason"]
    record = site_record(site)
    assert record["facts"]["skipped-inputs"] == 1 and [c["id"] for c in record["columns"]] == ["severity-1"]
    assert [(s["key"], s["clean"]) for s in record["samples"]] == [("good", None)]


def test_corruptgen_gallery_is_the_function_and_loads_its_work_on_first_use():
    import subprocess
    import sys

    code = (
        "import sys, corruptgen\n"
        "from corruptgen.cli import build_parser\n"
        "build_parser()  # imports every cli.py, corruptgen/gallery/cli.py included\n"
        "assert 'corruptgen.gallery.api' not in sys.modules and callable(corruptgen.gallery)\n"
        "import corruptgen.gallery.api\n"
        "assert callable(corruptgen.gallery) and corruptgen.gallery.__name__ == 'gallery'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

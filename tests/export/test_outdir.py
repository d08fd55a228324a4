"""ExportDir on its own: streamed files (``open``) follow the same rules as ``put``; one export per folder at a time;
layouts from other packages register and run."""

from __future__ import annotations

import io

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.export import LAYOUTS, ExportDir, ExportReport, export_build, register_layout


def report() -> ExportReport:
    return ExportReport(layout="test", build="b", out="o", subsets=[])


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_streamed_files_are_atomic_idempotent_and_never_silently_replaced(tmp_path):
    labels = np.arange(10, dtype=np.int64)
    r = report()
    with ExportDir(tmp_path / "o", r) as out:
        with out.open("labels.npy") as f:
            np.save(f, labels)
        with out.open("labels.npy") as f:  # the same bytes again: kept, not rewritten
            np.save(f, labels)
        with pytest.raises(RuntimeError), out.open("half.npy") as f:  # a failing writer leaves nothing behind
            f.write(b"partial")
            raise RuntimeError("interrupted")
    assert r.files == {"written": 1, "identical": 1}
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [".corruptgen-export.json", "labels.npy"]
    with ExportDir(tmp_path / "o", r) as out, out.open("labels.npy") as f:
        np.save(f, labels[::-1])
    assert r.files["conflict"] == 1 and (tmp_path / "o/labels.npy").read_bytes() == npy(labels)
    with ExportDir(tmp_path / "o", r, overwrite=True) as out, out.open("labels.npy") as f:
        np.save(f, labels[::-1])
    assert r.files["replaced"] == 1 and (tmp_path / "o/labels.npy").read_bytes() == npy(labels[::-1])


def test_a_folder_in_the_way_is_a_conflict_even_with_overwrite(tmp_path):
    r = report()
    (tmp_path / "o" / "a.JPEG").mkdir(parents=True)
    (tmp_path / "o" / ".corruptgen-export.json").write_text("{}")
    with ExportDir(tmp_path / "o", r, overwrite=True) as out:
        assert out.put("a.JPEG", b"x") == "conflict"
    assert (tmp_path / "o" / "a.JPEG").is_dir()


def test_one_export_per_folder_at_a_time(tmp_path):
    with ExportDir(tmp_path / "o", report()):
        with pytest.raises(CorruptgenError, match="another export is writing"), ExportDir(tmp_path / "o", report()):
            pass
    with ExportDir(tmp_path / "o", report()):  # released when the first one ends
        pass


def test_out_must_be_a_local_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CorruptgenError, match="not a folder"), ExportDir(tmp_path / "file", report()):
        pass
    with pytest.raises(CorruptgenError, match="local folder"):
        ExportDir("s3://bucket/out", report())
    with pytest.raises(CorruptgenError, match="--link-dest"):
        ExportDir(tmp_path / "o", report(), link_dest=[tmp_path / "missing"])


@pytest.fixture
def counting_layout():
    yield
    LAYOUTS._entries.pop("test-count", None)


def test_a_registered_layout_gets_build_subsets_and_checked_options(icb, tmp_path, counting_layout):
    seen = {}

    @register_layout("test-count", summary="one count file per subset", options={"suffix": "file suffix"})
    def count(build, out, subsets, options):
        seen.update(subsets=subsets, options=options, location=build.location)
        for subset in subsets:
            n = sum(1 for _ in build.iter_samples(subset))
            out.put(f"{subset}{options.get('suffix', '.txt')}", str(n).encode())

    assert "test-count" in LAYOUTS.names()
    with pytest.raises(ValueError, match="registered twice"):
        register_layout("test-count", summary="again")(count)
    r = export_build(icb, tmp_path / "o", layout="test-count", subsets="contrast_s2,clean", options=["suffix=.n"])
    assert seen == {"subsets": ["clean", "contrast_s2"], "options": {"suffix": ".n"}, "location": str(icb)}
    assert (tmp_path / "o/clean.n").read_text() == "6" and r.files == {"written": 2}

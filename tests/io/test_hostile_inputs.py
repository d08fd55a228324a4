"""Hostile inputs on the read side of a build: extreme aspect ratios, unbounded reads (FIFO, /dev/zero, sparse
files, huge tar members), damaged and odd tar shards, forged image headers. Each is skipped with its reason and
counted; the build never hangs, never runs out of memory and never refuses the other inputs."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import corruptgen
from corruptgen.errors import CorruptgenError, NoSamplesError
from corruptgen.family.plan import Plan
from corruptgen.family.preprocess import PRESETS, get_preprocess
from corruptgen.io.decode import DEFAULT_MAX_BYTES, BadImageError, decode_image
from corruptgen.io.sources import open_source

# The build runs in a child whose address space is capped: an unbounded read or allocation fails there with
# MemoryError instead of slowly eating the test machine. A normal small build needs well under 2 GiB.
_CAPPED_BUILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from corruptgen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _capped_build(source: str, out: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    args = [sys.executable, "-c", _CAPPED_BUILD, "build", "syn2nat", "--source", source, "--subsets", "posterize",
            "--out", str(out), "--no-progress", "--strict", *extra]  # fmt: skip
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def _manifest(out: Path) -> dict:
    return json.loads((out / "syn2nat" / "manifest.json").read_text())


def _png(arr: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def forged_jpeg(jpeg: bytes, width: int, height: int) -> bytes:
    """``jpeg`` with the frame header (SOF0) claiming ``width`` x ``height``; the scan data stays the small image's."""
    sof = jpeg.index(b"\xff\xc0")
    return jpeg[: sof + 5] + height.to_bytes(2, "big") + width.to_bytes(2, "big") + jpeg[sof + 9 :]


def _add(tar: tarfile.TarFile, name: str, data: bytes = b"", **fields) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if data else None)


def _tar_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            _add(tar, name, data)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- 3: aspect ratios


@pytest.mark.parametrize("name", PRESETS.names())
def test_every_preset_refuses_extreme_aspect_ratio_before_allocating(name: str) -> None:
    preset = get_preprocess(name)
    cap = 100_000
    for shape in ((1, 4000), (4000, 1)):
        thin = np.zeros((*shape, 3), np.uint8)
        h, w = preset.resized_size(*shape)
        if h * w > cap:  # e.g. imagenet: shorter side 1 -> 256 makes the long side 1,024,000
            with pytest.raises(BadImageError, match=r"^aspect ratio \d+:\d+ .*--max-pixels"):
                preset(thin, max_pixels=cap)
        else:
            assert preset(thin, max_pixels=cap).size <= 3 * max(cap, 4000)
    photo = np.random.default_rng(0).integers(0, 256, (300, 400, 3), np.uint8)
    assert np.array_equal(preset(photo, max_pixels=cap), preset(photo))  # normal images: same bytes


def test_imagenet_preset_names_the_growth() -> None:
    with pytest.raises(BadImageError) as exc:
        get_preprocess("imagenet").check_size(20000, 1, 100_000_000)
    assert exc.value.reason == ("aspect ratio 1:20000 too extreme for preprocessing 'imagenet': its resize of 1x20000 "
                                "gives 256x5120000 pixels > limit of 100000000 (--max-pixels)")  # fmt: skip
    # a preset that enlarges every image past the cap is a usage error of the plan, not a skip of every input
    with pytest.raises(CorruptgenError, match="'syn2nat@20000' resizes every image to at least 522442449 pixels"):
        corruptgen.make_plan("syn2nat", size=20000)


# ----------------------------------------------------------------------------------------------- 8a: forged JPEG


def test_forged_jpeg_header_is_refused_by_declared_size(encode: Callable[..., bytes], photo: Callable) -> None:
    forged = forged_jpeg(encode(photo("chelsea", step=8), "JPEG"), 65000, 65000)
    with pytest.raises(BadImageError, match="image too large: 65000x65000 pixels > limit of 100000000"):
        decode_image(forged, min_side_hint=256)  # used to decode at 8125x8125 through DCT scaling


# ------------------------------------------------------------------------------------------- 4: unbounded reads


@pytest.fixture
def hostile_folder(tmp_path: Path, encode: Callable[..., bytes], photo: Callable) -> Path:
    """One good photo next to every kind of unbounded or oversized input, all with image extensions."""
    root = tmp_path / "hostile"
    root.mkdir()
    jpeg = encode(photo("chelsea", step=4), "JPEG")
    (root / "ok.jpg").write_bytes(jpeg)
    (root / "thin.png").write_bytes(_png(np.full((20000, 1), 128, np.uint8)))  # 1 x 20000: a few hundred bytes
    (root / "forged.jpg").write_bytes(forged_jpeg(jpeg, 65000, 65000))
    os.mkfifo(root / "fifo.jpg")  # no writer: reading it blocks forever
    (root / "zero.jpg").symlink_to("/dev/zero")  # endless
    with open(root / "sparse.jpg", "wb") as f:
        f.truncate(3 * 10**9)  # 3 GB of holes: no disk used
    return root


def _reader(source, index: int, result: dict) -> None:
    try:
        result["data"] = source.read(index)
    except BadImageError as e:
        result["error"] = e.reason


def test_reads_are_bounded_and_never_block(hostile_folder: Path) -> None:
    source = open_source(f"imagefolder:{hostile_folder}")
    reasons = {}
    for index, item in enumerate(source.items()):
        if item.key in ("ok", "thin", "forged"):
            continue
        result: dict = {}
        thread = threading.Thread(target=_reader, args=(source, index, result), daemon=True)
        thread.start()
        thread.join(timeout=20)
        assert not thread.is_alive(), f"reading {item.key} blocks"
        reasons[item.key] = result["error"]
    assert reasons == {
        "fifo": "not a regular file: fifo.jpg is a FIFO; only regular files are read",
        "zero": "not a regular file: zero.jpg is a character device; only regular files are read",
        "sparse": f"file too large: sparse.jpg: 3000000000 bytes > limit of {DEFAULT_MAX_BYTES} bytes (--max-bytes)",
    }


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps the address space on Linux")
def test_capped_build_skips_every_hostile_file(tmp_path: Path, hostile_folder: Path) -> None:
    run = _capped_build(f"imagefolder:{hostile_folder}", tmp_path, "--preprocess", "imagenet")
    assert run.returncode == 1, run.stderr[-3000:]  # --strict: the build finished, and some inputs were skipped
    assert "Traceback" not in run.stderr and "skipped 5 of 6 inputs" in run.stdout
    m = _manifest(tmp_path)
    reasons = {s["key"]: s["reason"] for s in m["skipped"]}
    assert m["complete"] and m["counts"]["per_subset"] == {"clean": 1, "posterize": 1}
    assert sorted(reasons) == ["fifo", "forged", "sparse", "thin", "zero"]
    assert reasons["thin"].startswith("aspect ratio 1:20000") and "256x5120000" in reasons["thin"]
    assert reasons["forged"].startswith("image too large: 65000x65000")
    assert "is a FIFO" in reasons["fifo"] and "character device" in reasons["zero"]
    assert "(--max-bytes)" in reasons["sparse"]


def test_max_bytes_applies_to_every_source_kind(tmp_path: Path, hostile_folder: Path, hf_disk: Path) -> None:
    ok = hostile_folder / "ok.jpg"
    size = ok.stat().st_size
    (tmp_path / "list.txt").write_text("ok.jpg\n")
    with tarfile.open(tmp_path / "s.tar", "w") as tar:
        tar.add(ok, "ok.jpg")
    with tarfile.open(tmp_path / "s.tar.gz", "w:gz") as tar:
        tar.add(ok, "ok.jpg")
    specs = [f"imagefolder:{hostile_folder}", f"filelist:{tmp_path / 'list.txt'}:{hostile_folder}",
             f"webdataset:{tmp_path / 's.tar'}", f"webdataset:{tmp_path / 's.tar.gz'}"]  # fmt: skip
    for spec in specs:
        source = open_source(spec)
        index = next(i for i, item in enumerate(source.items()) if item.key == "ok")
        assert len(source.read(index, max_bytes=size)) == size
        with pytest.raises(BadImageError, match=rf"file too large: .*ok\.jpg: {size} bytes > limit of {size - 1} "):
            source.read(index, max_bytes=size - 1)
    hf = open_source(f"hf:{hf_disk}:test")
    with pytest.raises(BadImageError, match="> limit of 100 bytes"):
        hf.read(0, max_bytes=100)


def test_max_bytes_option_keeps_plan_ids_and_skips(tmp_path: Path, hostile_folder: Path) -> None:
    plan = corruptgen.make_plan("syn2nat", subsets="posterize")
    assert "max_bytes" not in plan.to_dict()  # the default is left out of the hash: existing plan ids do not change
    capped = corruptgen.make_plan("syn2nat", subsets="posterize", max_bytes=1000)
    assert capped.plan_id != plan.plan_id and Plan.from_dict(capped.to_dict()) == capped
    folder = tmp_path / "in"
    folder.mkdir()
    os.link(hostile_folder / "ok.jpg", folder / "ok.jpg")
    with pytest.raises(NoSamplesError, match="file too large"):  # its one input skipped: no samples, an error
        corruptgen.build("syn2nat", source=f"imagefolder:{folder}", out=tmp_path / "out", subsets="posterize",
                         max_bytes=1000)  # fmt: skip
    manifest = json.loads((tmp_path / "out/syn2nat/manifest.json").read_text())
    assert [s["reason"].split(":")[0] for s in manifest["skipped"]] == ["file too large"]
    from corruptgen.engine.reader import Build
    from corruptgen.hub.card_body import _command

    command, reproduces = _command(Build.open(tmp_path / "out" / "syn2nat"))  # the dataset card's build command
    assert reproduces and command.endswith("--max-bytes 1000")


def test_huge_member_of_small_tar_gz_is_not_read(tmp_path: Path, encode: Callable[..., bytes], photo: Callable) -> None:
    """A 300 MiB member that compresses to a few hundred KB: refused from its header, never decompressed into
    memory (the limit is the default --max-bytes)."""
    size = DEFAULT_MAX_BYTES + 44 * 2**20
    header = tarfile.TarInfo("big.jpg")
    header.size = size
    zeros = gzip.compress(bytes(4 * 2**20), mtime=0)  # gzip members concatenate: 4 MiB of zeros, size // 4 MiB times
    tail = _tar_bytes([("ok.jpg", encode(photo("coffee", step=8), "JPEG"))])
    path = tmp_path / "huge.tar.gz"
    path.write_bytes(gzip.compress(header.tobuf(format=tarfile.USTAR_FORMAT), mtime=0) + zeros * (size // 2**22)
                     + gzip.compress(tail, mtime=0))  # fmt: skip
    assert path.stat().st_size < 2**20
    source = open_source(f"webdataset:{path}")
    assert [item.key for item in source.items()] == ["big", "ok"]
    with pytest.raises(BadImageError, match=rf"big\.jpg: {size} bytes > limit of {DEFAULT_MAX_BYTES} bytes"):
        source.read(0)
    assert decode_image(source.read(1))[0].ndim == 3


# -------------------------------------------------------------------------------------------- 5: damaged shards


@pytest.fixture
def odd_shards(tmp_path: Path, encode: Callable[..., bytes], photo: Callable) -> Path:
    """good.tar (2 samples), trunc.tar and trunc.tar.gz (cut inside their 3rd sample), odd.tar (a regular sample
    next to a symlink, a hard link, a device, a FIFO and a duplicate member name)."""
    root = tmp_path / "wds"
    root.mkdir()
    rng = np.random.default_rng(0)
    jpegs = [encode(photo(n, step=8), "JPEG") for n in ("chelsea", "coffee", "astronaut")]
    noisy = encode(rng.integers(0, 256, (96, 96, 3), np.uint8), "PNG")  # incompressible, so the .gz cut lands inside
    (root / "good.tar").write_bytes(_tar_bytes([("g0.jpg", jpegs[0]), ("g0.cls", b"1"), ("g1.jpg", jpegs[1])]))
    samples = [("t0.jpg", jpegs[2]), ("t0.cls", b"7"), ("t1.png", noisy), ("t2.png", noisy), ("t2.cls", b"9")]
    whole = _tar_bytes(samples)
    cut = whole.index(noisy, whole.index(b"t2.png")) + 100
    (root / "trunc.tar").write_bytes(whole[:cut])
    packed = gzip.compress(whole, mtime=0)
    (root / "trunc.tar.gz").write_bytes(packed[: len(packed) * 3 // 4])
    with tarfile.open(root / "odd.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
        _add(tar, "a.jpg", jpegs[0])
        _add(tar, "b.jpg", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        _add(tar, "c.jpg", type=tarfile.LNKTYPE, linkname="a.jpg")
        _add(tar, "d.jpg", type=tarfile.CHRTYPE, devmajor=1, devminor=5)
        _add(tar, "e.jpg", type=tarfile.FIFOTYPE)
        _add(tar, "f.jpg", jpegs[1])
        _add(tar, "f.jpg", jpegs[2])
    return root


def test_odd_shards_give_problem_items_deterministically(odd_shards: Path) -> None:
    spec = f"webdataset:{odd_shards}/{{good,trunc,odd}}.tar"
    source = open_source(spec)
    keys = [item.key for item in source.items()]
    assert keys == [item.key for item in open_source(spec).items()]  # stable: a plan's source length and keys
    assert keys == ["g0", "g1", "t0", "t1", "trunc_tar_rest", "a", "b", "c", "d", "e", "f"]
    reasons = {}
    for index, key in enumerate(keys):
        try:
            source.read(index)
        except BadImageError as e:
            reasons[key] = e.reason
    assert sorted(reasons) == ["b", "c", "d", "e", "f", "trunc_tar_rest"]
    assert reasons["trunc_tar_rest"].startswith("tar shard trunc.tar damaged after 4 members")
    assert reasons["trunc_tar_rest"].endswith("sample 't2' and the rest of the shard skipped")
    assert reasons["b"] == "tar member b.jpg is a symbolic link (to /etc/passwd); only regular members are read"
    assert reasons["c"] == "tar member c.jpg is a hard link (to a.jpg); only regular members are read"
    assert "is a device" in reasons["d"] and "is a FIFO" in reasons["e"]
    assert reasons["f"] == "tar member name f.jpg repeated in the shard: ambiguous"
    assert source.describe()["refused"] == 6


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps the address space on Linux")
def test_damaged_shard_does_not_refuse_the_build(tmp_path: Path, odd_shards: Path) -> None:
    os.mkfifo(odd_shards / "fifo.tar")  # opening it would block
    source = f"webdataset:{odd_shards}/{{good.tar,trunc.tar,trunc.tar.gz,odd.tar,fifo.tar}}"
    run = _capped_build(source, tmp_path)
    assert run.returncode == 1, run.stderr[-3000:]  # used to exit 2 ("cannot read tar shard") and build nothing
    assert "Traceback" not in run.stderr
    m = _manifest(tmp_path)
    reasons = {s["key"]: s["reason"] for s in m["skipped"]}
    assert sorted(reasons) == ["b", "c", "d", "e", "f", "fifo_tar", "trunc_tar_gz_rest", "trunc_tar_rest"]
    # where the .gz listing stops depends on zlib's buffering; what precedes the damage is used
    gz_items = len(open_source(f"webdataset:{odd_shards}/trunc.tar.gz").items())
    assert gz_items >= 2 and m["complete"] and m["counts"]["inputs"] == 2 + 3 + gz_items + 6 + 1
    assert m["counts"]["per_subset"]["clean"] == m["counts"]["inputs"] - 8  # g0 g1 | t0 t1 | .gz samples | a
    assert reasons["fifo_tar"] == "not a regular file: tar shard fifo.tar is a FIFO"  # by its name, never its folder
    gz_rest = reasons["trunc_tar_gz_rest"]
    assert gz_rest.startswith("tar shard trunc.tar.gz damaged after ") and "(EOFError: " in gz_rest
    assert gz_rest.endswith("the rest of the shard skipped")

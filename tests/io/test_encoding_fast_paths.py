"""The per-sample fast paths write exactly what the plain encoders write: JSON records and tar member headers."""

from __future__ import annotations

import math
import random
import tarfile

import pytest

from corruptgen.io.codec import JsonRecord, dump_json
from corruptgen.io.shards import TAR_MTIME, tar_header

FIXED = {"benchmark": "cifar10-c", "preprocessing": {"crop": None, "resize": [32, 32], "name": "resize32"},
         "versions": {"numpy": "2.4.6", "pillow": "13.0.0"}, "subset": "fog_s3", "corruption": "cifar10_c/fog",
         "category": "weather", "severity": 3}  # fmt: skip


def _values(rng: random.Random) -> dict:
    pick = [
        None,
        True,
        False,
        0,
        -7,
        2**62,
        0.1,
        1e-300,
        'é ☃ "q" \\ \n',
        "plain",
        [1, "a", None],
        {"b": 1, "a": [2.5]},
    ]
    values = {"key": f"k{rng.randrange(10**6)}", "source_key": rng.choice(pick), "repeat": rng.randrange(5),
              "label": rng.choice(pick), "label_name": rng.choice(pick), "params": {"z": rng.choice(pick), "a": 1},
              "seed": rng.randrange(2**63)}  # fmt: skip
    if rng.random() < 0.3:
        values["frames"] = rng.randrange(1, 30)
    return values


def test_json_record_equals_dump_json_of_the_whole_dict():
    rng = random.Random(0)
    record = JsonRecord(FIXED)
    for _ in range(300):
        values = _values(rng)
        assert record.dump(values) == dump_json({**FIXED, **values})
    assert record.dump({"subset": "other", "x": 1}) == dump_json({**FIXED, "subset": "other", "x": 1})  # overlap


def test_json_record_refuses_nan_like_dump_json():
    with pytest.raises(ValueError):
        JsonRecord(FIXED).dump({"params": {"sigma": math.nan}})


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


def _reference_header(name: str, size: int) -> bytes:
    """The header field by field, as the shard writer wrote it before its fast path (PAX: names ustar cannot hold)."""
    raw, prefix = name.encode(), b""
    if len(raw) > 100:
        cut = raw.rfind(b"/", 0, 156)
        if cut <= 0 or len(raw) - cut - 1 > 100:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uname, info.gname = size, TAR_MTIME, 0o444, "", ""
            return info.tobuf(format=tarfile.PAX_FORMAT)
        prefix, raw = raw[:cut], raw[cut + 1 :]
    header = bytearray(512)
    header[0 : len(raw)] = raw
    header[100:108], header[108:116], header[116:124] = _octal(0o444, 8), _octal(0, 8), _octal(0, 8)
    header[124:136], header[136:148] = _octal(size, 12), _octal(TAR_MTIME, 12)
    header[148:156], header[156:157], header[257:265] = b" " * 8, tarfile.REGTYPE, b"ustar\x0000"
    header[329:337], header[337:345] = _octal(0, 8), _octal(0, 8)
    header[345 : 345 + len(prefix)] = prefix
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


@pytest.mark.parametrize("name", ["k.json", "00000001_s3.png", "x" * 100 + ".jpg", "d/" * 60 + "k.000.jpg",
                                  "ü" * 40 + "/k.cls", "a" * 160 + "/b.jpg"])  # fmt: skip
@pytest.mark.parametrize("size", [0, 1, 511, 512, 10**6, 8**11 - 1])
def test_tar_header_is_the_field_by_field_header(name, size, tmp_path):
    header = tar_header(name, size)
    assert header == _reference_header(name, size)
    with open(tmp_path / "t.tar", "wb") as f:  # the data and end blocks as a sparse run of zeros
        f.write(header)
        f.truncate(len(header) + size + -size % 512 + 1024)
    with tarfile.open(tmp_path / "t.tar") as tar:  # and tarfile reads it back
        (member,) = tar.getmembers()
    assert (member.name, member.size, member.mtime, member.mode) == (name, size, TAR_MTIME, 0o444)

"""A build makes no network request except to the source and output it was given: every family is built from one
tiny local image (with its card) in a fresh interpreter whose sockets refuse to connect or resolve a name, and every
attempt is recorded (libraries that catch the failure, as albumentations' update check does, cannot hide it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from PIL import Image

_SCRIPT = textwrap.dedent(
    """
    import json, socket, sys

    attempts = []
    _connect = socket.socket.connect


    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(f"connect {address}")
            raise OSError("network blocked by the test")
        return _connect(self, address)


    def resolve(*args, **kwargs):
        attempts.append(f"getaddrinfo {args[:2]}")
        raise socket.gaierror("network blocked by the test")


    socket.socket.connect = connect
    socket.socket.connect_ex = lambda self, address: connect(self, address)
    socket.getaddrinfo = resolve

    import corruptgen
    from corruptgen.family.benchmark import get_benchmark, list_benchmarks

    source, out = sys.argv[1], sys.argv[2]
    built = []
    for name in list_benchmarks():
        bench = get_benchmark(name)
        subset = (bench.default_subsets or [s for s in bench.subsets if s != "clean"])[0]
        corruptgen.build(name, source=f"imagefolder:{source}", subsets=subset, out=f"{out}/{name}", progress=False)
        built.append(name)
    print(json.dumps({"built": built, "attempts": attempts}))
    """
)


def test_builds_of_every_family_make_no_network_request(tmp_path):
    pixels = np.zeros((48, 48, 3), np.uint8)
    pixels[10:30, 5:40] = 200
    (tmp_path / "src").mkdir()
    Image.fromarray(pixels).save(tmp_path / "src" / "a.png")
    env = {k: v for k, v in os.environ.items() if k != "NO_ALBUMENTATIONS_UPDATE"}  # corruptgen must set it
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path / "src"), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    from corruptgen.family.benchmark import list_benchmarks

    assert result["built"] == list_benchmarks() and len(result["built"]) >= 9
    assert result["attempts"] == [], result["attempts"]

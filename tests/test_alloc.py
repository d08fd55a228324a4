"""The render processes' allocator policy (corruptgen.alloc) reaches every public way of applying a corruption.

Checked on the mechanism, not on time: in a fresh process (whatever the test process did before), after one warm-up
call, repeated on-the-fly calls of the corruptions with large temporaries make (almost) no minor page faults per
image, through ``corruptions.get(name).apply`` and through ``augment.RandomCorruption``; without the policy each call
maps and zero-fills its temporaries anew (hundreds to thousands of faults per 224 px image on glibc).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from corruptgen import alloc

#: the corruptions that make temporaries of 128 KiB and more per 224 px image (glibc's default mmap threshold)
LARGE_TEMPORARIES = ("fog", "motion_blur", "snow", "frost", "elastic_transform", "glass_blur", "zoom_blur")
CALLS = 8

CHILD = """
import json, resource, sys
import numpy as np, skimage.data
from PIL import Image

path, names, calls = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
image = np.asarray(Image.fromarray(skimage.data.astronaut()).resize((224, 224)))
if path == "apply":
    from corruptgen.corruptions import get

    def calls_of(name):
        corruption = get(f"imagenet_c/{name}")
        if name == "frost":  # its textures load on first use: one warm-up call per texture
            for texture in range(5):
                corruption.apply(image, texture, severity=3, texture=texture)
        return lambda i: corruption.apply(image, i, severity=3)
else:
    from corruptgen.augment import RandomCorruption

    def calls_of(name):
        aug = RandomCorruption("imagenet_c", names=[name], severity=3, seed=0)
        return lambda i: aug(image)

faults = {}
for name in names:
    call = calls_of(name)
    call(0)  # the warm-up call
    per_call = []
    for i in range(1, calls + 1):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        call(i)
        per_call.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    faults[name] = per_call
print(json.dumps(faults))
"""


def _faults(path: str, **env: str) -> dict[str, list[int]]:
    environ = {k: v for k, v in os.environ.items() if k != alloc.ENV}
    environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", **env})
    done = subprocess.run([sys.executable, "-c", CHILD, path, ",".join(LARGE_TEMPORARIES), str(CALLS)],
                          capture_output=True, text=True, env=environ, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy needs glibc (Linux)")
@pytest.mark.parametrize("path", ["apply", "RandomCorruption"])
def test_on_the_fly_calls_make_no_page_faults_after_a_warm_up(path):
    faults = _faults(path)
    # the median call: a texture loaded on first use by RandomCorruption's frost is a one-time cost, not per image
    medians = {name: sorted(per_call)[len(per_call) // 2] for name, per_call in faults.items()}
    assert all(m <= 4 for m in medians.values()), faults


def test_the_opt_out_leaves_glibc_as_it_is(monkeypatch):
    monkeypatch.setattr(alloc, "_state", {})
    monkeypatch.setenv(alloc.ENV, "default")
    assert alloc.tune_allocator() is False
    monkeypatch.setenv(alloc.ENV, "")
    assert alloc.tune_allocator() is False  # decided once per process, at the first call

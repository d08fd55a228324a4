"""Build recipes whose image/label member hashes are pinned in ``tests/data/golden_members.json``.

Run ``python tests/golden_builds.py`` to (re)record them — only when a change is meant to alter output bytes, and say
so in the commit message. ``tests/test_golden_bytes.py`` rebuilds and compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tarfile
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).parent / "data" / "golden_members.json"
#: family -> build keyword arguments (sample photos, a few subsets each)
RECIPES: dict[str, dict] = {
    "syn2nat": {"subsets": "solarize,random_sun_flare,iso_noise,affines,color_jitter", "limit": 4},
    "imagenet-c": {"subsets": "gaussian_noise,glass_blur,frost,jpeg_compression", "severities": "1,5", "limit": 3},
    "imagenet-p": {"subsets": "gaussian_noise,translate", "difficulty": 1, "limit": 2},
    "vcr": {"subsets": "gaussian_blur,brightness", "per_image": 2, "limit": 3},
    "opticsbench-rg": {"subsets": "coma", "severities": "2", "limit": 2},
    "opticsbench": {"subsets": "defocus_spherical,astigmatism,defocus_disk", "severities": "1,5", "limit": 3},
    "cifar10-c": {"subsets": "glass_blur,frost,elastic_transform,spatter", "severities": "1,5", "limit": 3},
    "tinyimagenet-c": {"subsets": "snow,fog,pixelate", "severities": "1,5", "limit": 3},
    "laugros": {"limit": 2, "image_format": "png"},
    # a tiny surrogate (tests/tiny_models.py): the default transfer sets, CW and the 8-bit rounding of §3.2's ε range
    "adversarial": {
        "surrogate": "tiny_models:TinySurrogate",
        "attacks": "mi_fgsm:eps=0.04,pgd_ll:eps=0.04,cw_l2:steps=10,fgsm:eps=0.0025..0.025",
        "limit": 3,
        "size": 32,
    },
}
#: plans whose ids are pinned (an id names a build: a changed id means existing builds can no longer be resumed)
PLAN_CASES: list[tuple[str, dict]] = [
    ("syn2nat", {}), ("syn2nat", {"subsets": "solarize,affines,posterize"}), ("syn2nat", {"subsets": "all"}),
    ("imagenet-c", {}), ("imagenet-c", {"subsets": "frost,gaussian_noise_s2", "severities": "1,2"}),
    ("imagenet-c", {"extra": True}), ("imagenet-p", {}), ("imagenet-p", {"subsets": "translate_d2,clean"}),
    ("imagenet-p", {"difficulty": 3}), ("vcr", {}), ("vcr", {"subsets": "frost,brightness", "per_image": 3}),
    ("opticsbench", {}), ("opticsbench-rg", {"subsets": "coma", "severities": "2"}),
    ("opticsbench", {"subsets": "all"}), ("laugros", {}), ("laugros", {"selection": "eccvw2020"}),
]  # fmt: skip
#: member extensions whose bytes are pinned (json metadata may gain fields)
PINNED = (".jpg", ".png", ".webp", ".cls")


def member_hashes(root: Path) -> dict[str, str]:
    """sha256 of every pinned member of every shard below ``root``: ``"<shard>/<member>" -> hex``."""
    out = {}
    for shard in sorted(root.rglob("*.tar")):
        with tarfile.open(shard) as tar:
            for m in tar.getmembers():
                if m.name.endswith(PINNED):
                    out[f"{shard.relative_to(root).as_posix()}/{m.name}"] = hashlib.sha256(
                        tar.extractfile(m).read()
                    ).hexdigest()
    return out


def build_hashes(family: str, out: Path) -> dict[str, str]:
    import corruptgen

    corruptgen.build(family, out=out, **RECIPES[family])
    return member_hashes(out / family)


def plan_ids() -> list[str]:
    import corruptgen

    return [f"{family} {json.dumps(kw, sort_keys=True)} {corruptgen.make_plan(family, **kw).plan_id}"
            for family, kw in PLAN_CASES]  # fmt: skip


def main(families: list[str]) -> None:
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if not families or "plan_ids" in families:
        golden["plan_ids"] = plan_ids()
        families = [f for f in families if f != "plan_ids"]
    for family in families or list(RECIPES):
        if family not in RECIPES:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            golden[family] = build_hashes(family, Path(tmp))
        print(f"{family}: {len(golden[family])} members")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

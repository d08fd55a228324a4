"""CPU cost of the dataset card a build writes (issue O): this tree against a baseline ref, in the same run.

Renders a 96-subset CIFAR-10-C build (19 corruptions x 5 severities + clean) from ``--inputs`` random 32x32 images (an
npy source) once, without a card, with this tree. Then, alternating ``--repeats`` times, a fresh process per
measurement imports what a build process has imported by the time it writes its card (corruptgen's build API, the
chunk renderer and the family) and times, in CPU-seconds (``time.process_time``: this process, all threads), the
import of the card module plus ``write_card`` on that build: once with this tree, once with ``--baseline`` (a git ref,
default ``main``, exported with ``git archive`` into a temporary folder and put first on ``PYTHONPATH``). Prints the
medians and which heavy modules each side imported. One thread for OpenCV/BLAS (``OMP_NUM_THREADS=1``).

    python scripts/bench_card.py [--inputs 100] [--repeats 5] [--baseline main] [--no-images]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, child_env, export_tree

HEAVY = ("datasets", "pandas", "pyarrow", "matplotlib", "torch")

_MEASURE = (
    f"HEAVY = {HEAVY!r}"
    + """
import json, sys, time
import corruptgen, corruptgen.api, corruptgen.engine.chunk
from corruptgen.family.benchmark import get_benchmark
get_benchmark("cifar10-c")
start = time.process_time()
from corruptgen.hub.card import write_card
write_card(sys.argv[1], images=sys.argv[2] == "1")
seconds = time.process_time() - start
print(json.dumps({"seconds": seconds, "module": corruptgen.__file__,
                  "heavy": [m for m in HEAVY if m in sys.modules]}))
"""
)


def measure(build: Path, images: bool, pythonpath: Path | None) -> dict:
    env = child_env(pythonpath)
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(build), "1" if images else "0"], env=env,
                         cwd=build.parent, capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=100, help="source images (samples = 96 x inputs)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", default="main", help="git ref to compare with (default main)")
    ap.add_argument("--no-images", dest="images", action="store_false", help="time the card without its figures")
    args = ap.parse_args()
    import numpy as np

    sys.path.insert(0, str(ROOT))
    import corruptgen

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rng = np.random.default_rng(0)
        np.save(tmp / "img.npy", rng.integers(0, 256, (args.inputs, 32, 32, 3), dtype=np.uint8))
        np.save(tmp / "lab.npy", rng.integers(0, 10, args.inputs))
        result = corruptgen.build("cifar10-c", source=f"npy:{tmp / 'img.npy'}:{tmp / 'lab.npy'}", out=tmp / "out",
                                  card=False, progress=False)  # fmt: skip
        build = Path(result.out_dir)
        configs = len(result.manifest["subsets"])
        baseline = export_tree(args.baseline, tmp)
        runs: dict[str, list[dict]] = {"this tree": [], f"baseline {args.baseline}": []}
        for _ in range(args.repeats):
            runs["this tree"].append(measure(build, args.images, None))
            runs[f"baseline {args.baseline}"].append(measure(build, args.images, baseline))
    print(f"card of a cifar10-c build: {configs} configs, {result.manifest['counts']['samples']:,} samples, "
          f"figures {'on' if args.images else 'off'}; OMP_NUM_THREADS=1; CPU-seconds (process_time), "
          f"median of {args.repeats} interleaved fresh processes")  # fmt: skip
    for name, values in runs.items():
        seconds = sorted(v["seconds"] for v in values)
        print(
            f"  {name:<20} {statistics.median(seconds):7.3f} s  (min {seconds[0]:.3f}, max {seconds[-1]:.3f}); "
            f"heavy imports: {', '.join(values[0]['heavy']) or 'none'}; corruptgen from {values[0]['module']}"
        )


if __name__ == "__main__":
    main()

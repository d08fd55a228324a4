#!/usr/bin/env python
"""CPU time per image of every ImageNet-C-style corruption: corruptgen vs the reference scripts and the pip peers.

Implementations, each in its own process, one thread (BLAS, OpenMP, OpenCV and torch pinned):
* ``corruptgen`` — the registered corruption (``corruptions.get(...).apply``), with the allocator policy of its render
  processes (``corruptgen.alloc``);
* ``reference`` — the reference scripts' formulas (hendrycks/robustness ``make_imagenet_c.py`` at 224,
  ``make_tinyimagenet_c.py`` at 64, ``make_cifar_c.py`` at 32) as transcribed for the tests, on current libraries;
  motion blur through ImageMagick itself (Wand) when ``wand`` and ImageMagick 6 are installed;
* ``imagecorruptions`` 1.1.2 and ``corrupt-tta`` 0.1.7 — they need numpy < 2, so they run in ``--peer-python``:

    python -m venv peers && peers/bin/pip install "numpy<2" imagecorruptions==1.1.2 corrupt-tta==0.1.7
    apt-get install imagemagick && pip install Wand      # optional: the reference's motion blur through ImageMagick
    python scripts/bench_peers.py all --peer-python peers/bin/python --size 224 --out docs/bench_peers/peers_224.json \\
        --doc docs/benchmarks.md                        # also writes the table into the page's region for the size

Inputs: astronaut, coffee, chelsea and rocket from scikit-image, shorter side resized (PIL bilinear) to
``size * 256 / 224`` and centre-cropped to ``size``. corruptgen and the reference run the family of that resolution
(``imagenet-c`` at 224, ``tinyimagenet-c`` at 64, ``cifar10-c`` at 32; ``--family`` overrides); a peer has one set of
constants for every size. Every implementation returns a uint8 image (corrupt-tta's float result goes through
``np.uint8``, the reference's cast). Timing, interleaved so that a change of load on a shared machine touches every
implementation alike: per corruption/severity, one warm-up call per photo, then 3 rounds in which each implementation
in turn makes one timed run of at least 0.5 s cycling over the photos; the table gives the median CPU-seconds per image
(``process_time``) and the range of the ratio over the rounds. ``table FILE.json [--doc PAGE]`` prints (and writes)
the table of a saved run again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import describe_machine
from bench_common import machine as _machine
from bench_common import write_region as _write_region

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")
NAMES = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
         "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression",
         "speckle_noise", "gaussian_blur", "spatter", "saturate")  # fmt: skip
FAMILY_FOR_SIZE = {224: "imagenet-c", 64: "tinyimagenet-c", 32: "cifar10-c"}
RUNS, MIN_SECONDS = 3, 0.5
# deterministic given the image (no random draw): their outputs can be compared with the reference's exactly
DETERMINISTIC = ("defocus_blur", "brightness", "contrast", "pixelate", "jpeg_compression", "saturate")
#: corruptgen renders these through an exact colour table where a worker renders enough images of one severity
TABLED = ("brightness", "saturate")


def _pin_threads() -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = "1"


def _photos(size: int) -> list:
    import numpy as np
    import skimage.data
    from PIL import Image

    out = []
    for name in PHOTOS:
        img = Image.fromarray(getattr(skimage.data, name)()).convert("RGB")
        short = round(size * 256 / 224)
        w, h = img.size
        scale = short / min(w, h)
        img = img.resize((max(short, round(w * scale)), max(short, round(h * scale))), Image.BILINEAR)
        w, h = img.size
        left, top = (w - size) // 2, (h - size) // 2
        out.append(np.asarray(img.crop((left, top, left + size, top + size))))
    return out


def _functions(impl: str, family: str):
    """name -> f(image, call_index, severity) for one implementation; names it lacks are left out."""
    if impl == "corruptgen":
        import torch

        from corruptgen.corruptions import get

        torch.set_num_threads(1)
        prefix = family.replace("-", "_")
        funcs = {}
        for name in NAMES:
            try:
                corruption = get(f"{prefix}/{name}")
            except Exception:  # a corruption the family does not have
                continue
            funcs[name] = lambda img, i, s, c=corruption: c.apply(img, i, severity=s)[0]
        return funcs
    if impl == "imagecorruptions":
        from imagecorruptions import corrupt

        return {n: (lambda img, i, s, n=n: corrupt(img, severity=s, corruption_name=n)) for n in NAMES}
    if impl == "corrupt-tta":
        import corrupt_tta
        import numpy as np

        # corrupt-tta returns float arrays in [0, 255]; np.uint8 of it is the image (the reference's cast)
        funcs = corrupt_tta.corruption_dict.items()
        return {n: (lambda img, i, s, f=f: np.uint8(f(img, s))) for n, f in funcs if n in NAMES}
    if impl == "reference":
        return _reference_functions(family)
    raise SystemExit(f"unknown --impl {impl!r}")


def _reference_functions(family: str):
    """The reference scripts' formulas (make_imagenet_c.py at 224, make_tinyimagenet_c.py / make_cifar_c.py at 64 /
    32) as transcribed for the test suite, one seeded Generator per call; motion blur through ImageMagick itself
    (Wand, as the reference) when ``wand`` imports, else the tap-by-tap transcription."""
    import importlib.util

    import numpy as np

    from corruptgen.bench.baselines import imagenet_c_reference, imagenet_c_reference_fn

    if family == "imagenet-c":  # as bench_imagenet_c.py and corruptgen bench time it (glass blur: per-pixel draws)
        ref = imagenet_c_reference()
        fns = {n: imagenet_c_reference_fn(ref, n) for n in NAMES}
        funcs = {n: (lambda img, i, s, f=f: f(img, np.random.default_rng(i), s)) for n, f in fns.items()}
    else:
        path = Path(__file__).resolve().parents[1] / "tests" / "families" / "small_c_reference.py"
        spec = importlib.util.spec_from_file_location(path.stem, path)
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)
        funcs = {n: (lambda img, i, s, n=n: ref.corrupt(n, img, np.random.default_rng(i), s))
                 for n in NAMES}  # fmt: skip
    try:
        from wand.image import Image as WandImage  # noqa: F401
    except ImportError:
        return funcs
    motion = _wand_motion_blur(family)
    return {**funcs, "motion_blur": motion}


def _wand_motion_blur(family: str):
    """The reference's motion blur: PNG through Wand's ``motion_blur`` (ImageMagick), decoded by OpenCV."""
    import io

    import cv2
    import numpy as np
    from PIL import Image
    from wand.image import Image as WandImage

    from corruptgen.corruptions import get

    table = get(f"{family.replace('-', '_')}/motion_blur").params["severities"]

    def motion(img, i, s):
        radius, sigma = table[str(s)]["radius"], table[str(s)]["sigma"]
        buffer = io.BytesIO()
        Image.fromarray(img).save(buffer, format="PNG")
        with WandImage(blob=buffer.getvalue()) as picture:
            picture.motion_blur(radius=radius, sigma=sigma, angle=float(np.random.default_rng(i).uniform(-45, 45)))
            out = cv2.imdecode(np.frombuffer(picture.make_blob(), np.uint8), cv2.IMREAD_UNCHANGED)
        return np.clip(out[..., [2, 1, 0]], 0, 255)

    return motion


def _timed_run(fn, photos, severity: int, start: int) -> tuple[int, float, float]:
    """One timed run of at least MIN_SECONDS cycling over the photos: (calls, wall s, CPU s)."""
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        fn(photos[(start + n) % len(photos)], start + n, severity)
        n += 1
        wall = time.perf_counter() - t0
        if wall >= MIN_SECONDS:
            return n, wall, time.process_time() - c0


def _table_counts() -> dict[str, int]:
    from corruptgen.families.imagenet_c._hsv_table import CACHE

    return dict(CACHE.counts)


def _until_tabled(fn, photos, severity: int, start: int) -> int:
    """Call ``fn`` until its exact colour table exists (a build large enough to use it, ``_hsv_table``'s break-even
    at this size); returns the calls made."""
    from corruptgen.families.imagenet_c._hsv_table import break_even

    builds, n = _table_counts()["builds"], 0
    limit = break_even(photos[0].shape[0] * photos[0].shape[1]) + 10
    while _table_counts()["builds"] == builds and n < limit:
        fn(photos[(start + n) % len(photos)], start + n, severity)
        n += 1
    return n


def _regime(before: dict[str, int], after: dict[str, int]) -> str:
    """``table`` when every call of a run went through a colour table built before it, ``kernel`` when none did."""
    table, kernel, builds = (after[k] - before[k] for k in ("table", "kernel", "builds"))
    return "table" if table and not (kernel or builds) else "kernel" if not table else "mixed"


def _setup(impl: str) -> None:
    _pin_threads()
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:
        pass
    if impl == "corruptgen":  # the render processes' allocator policy (corruptgen.alloc), as in every build
        from corruptgen.alloc import tune_allocator

        tune_allocator()


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": sys.version.split()[0]}
    for pkg in ("numpy", "opencv-python-headless", "opencv-python", "pillow", "scikit-image", "scipy", "wand"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            continue
    return out


def serve(impl: str, size: int, family: str | None) -> None:
    """Answer timing requests on stdin, one JSON line each: ``{"name", "severity"}`` → ``{"calls", "wall", "cpu"}``
    (a warm-up call per photo the first time a corruption/severity is asked for) or ``{"error"}``."""
    _setup(impl)
    family = family or FAMILY_FOR_SIZE.get(size, "imagenet-c")
    photos = _photos(size)
    funcs = _functions(impl, family)
    hello = {"ready": impl, "family": family, "names": sorted(funcs), "versions": _versions()}
    if impl == "corruptgen":
        from corruptgen.families.imagenet_c._hsv_table import break_even

        hello["table_break_even"] = break_even(size * size)
    print(json.dumps(hello), flush=True)
    warm, calls = set(), 0
    for line in sys.stdin:
        req = json.loads(line)
        name, severity = req["name"], int(req["severity"])
        try:
            if name not in funcs:
                raise KeyError(f"{impl} has no {name}")
            if (name, severity) not in warm:
                for i, img in enumerate(photos):
                    funcs[name](img, i, severity)
                if impl == "corruptgen" and name in TABLED:
                    calls += _until_tabled(funcs[name], photos, severity, calls)
                warm.add((name, severity))
            counts = _table_counts() if impl == "corruptgen" else None
            n, wall, cpu = _timed_run(funcs[name], photos, severity, calls)
            calls += n
            reply = {"calls": n, "wall": wall, "cpu": cpu}
            if counts is not None and name in TABLED:
                reply["regime"] = _regime(counts, _table_counts())
        except Exception as error:  # a peer broken by its dependencies (e.g. a newer scikit-image)
            reply = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps(reply), flush=True)


class _Server:
    def __init__(self, impl: str, python: str, size: int, family: str | None) -> None:
        cmd = [python, __file__, "serve", "--impl", impl, "--size", str(size)] + (
            ["--family", family] if family else []
        )
        self.impl = impl
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = self.proc.stdout.readline()
        if not hello:
            raise SystemExit(f"{impl} did not start ({' '.join(cmd)})")
        self.info = json.loads(hello)

    def ask(self, name: str, severity: int) -> dict:
        self.proc.stdin.write(json.dumps({"name": name, "severity": severity}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def interleaved(size: int, family: str | None, severities: list[int], names: list[str], peer_python: str | None,
                reference: bool = True) -> list[dict]:  # fmt: skip
    """Time every implementation on the same photos, interleaved: for each corruption/severity, RUNS rounds that each
    give every implementation one timed run in turn, so a change of load touches all alike. Per implementation and
    row: the median images/s and CPU-s per image of its runs, and every run's CPU-s per image."""
    impls = [("corruptgen", sys.executable)]
    if reference:
        impls.append(("reference", sys.executable))
    if peer_python:
        impls += [("imagecorruptions", peer_python), ("corrupt-tta", peer_python)]
    servers = [_Server(impl, python, size, family) for impl, python in impls]
    results = [{"impl": srv.impl, "size": size, "family": srv.info["family"] if srv.impl == "corruptgen" else None,
                "versions": srv.info["versions"], "rows": {}} for srv in servers]  # fmt: skip
    results[0]["table_break_even"] = servers[0].info.get("table_break_even")
    load = [os.getloadavg()[0]]
    try:
        for name in names:
            for s in severities:
                runs: dict[str, list[dict]] = {srv.impl: [] for srv in servers}
                for _ in range(RUNS):
                    for srv in servers:
                        if name in srv.info["names"]:
                            runs[srv.impl].append(srv.ask(name, s))
                for result in results:
                    done = runs[result["impl"]]
                    if not done:
                        continue
                    errors = [r["error"] for r in done if "error" in r]
                    if errors:
                        result["rows"][f"{name}/{s}"] = {"error": errors[0]}
                        continue
                    rates = sorted(r["calls"] / r["wall"] for r in done)
                    cpus = [r["cpu"] / r["calls"] for r in done]
                    result["rows"][f"{name}/{s}"] = {
                        "img_s": rates[len(rates) // 2],
                        "cpu_s_per_img": sorted(cpus)[len(cpus) // 2],
                        "cpu_runs": cpus,
                        **({"regimes": [r["regime"] for r in done]} if "regime" in done[0] else {}),
                    }
                cells = "  ".join(f"{r['impl']} {1e3 * r['rows'][f'{name}/{s}'].get('cpu_s_per_img', float('nan')):.2f}"
                                  for r in results if f"{name}/{s}" in r["rows"])  # fmt: skip
                print(f"{size:4d} {name:18s} s{s}  CPU ms/img: {cells}", file=sys.stderr, flush=True)
    finally:
        for srv in servers:
            srv.close()
    load.append(os.getloadavg()[0])
    results[0]["machine"] = _machine(load)
    return results


def outputs(impl: str, size: int, path: str) -> None:
    """Save ``impl``'s uint8 outputs (``np.uint8`` of the result, the reference's cast) of the DETERMINISTIC
    corruptions at severities 1..5 with ImageNet-C's constants (corruptgen: family ``imagenet-c``)."""
    import numpy as np

    photos = _photos(size)
    funcs = _functions(impl, "imagenet-c")
    arrays = {}
    for name in DETERMINISTIC:
        for s in range(1, 6):
            try:
                arrays[f"{name}/{s}"] = np.stack([np.uint8(funcs[name](img, i, s)) for i, img in enumerate(photos)])
            except Exception:  # a peer broken by its dependencies: no comparison
                continue
    np.savez(path, **arrays)


def fidelity(peer_python: str, size: int) -> str:
    """Markdown table: how far each peer's output is from corruptgen's (= the reference's, exact for these
    corruptions): share of differing uint8 values and the largest difference, over the photos and severities 1..5."""
    import tempfile

    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        mine = Path(tmp, "corruptgen.npz")
        outputs("corruptgen", size, str(mine))
        ours = dict(np.load(mine))
        head = "| corruption | peer | values that differ | max \\|diff\\| (grey levels) |"
        lines = [
            f"size {size}×{size}, ImageNet-C constants, severities 1–5, {len(PHOTOS)} photos",
            "",
            head,
            "|---" * 4 + "|",
        ]
        for impl in ("imagecorruptions", "corrupt-tta"):
            path = Path(tmp, f"{impl}.npz")
            cmd = [peer_python, __file__, "outputs", "--impl", impl, "--size", str(size), "--out", str(path)]
            subprocess.run(cmd, capture_output=True, text=True, check=True)
            theirs = dict(np.load(path))
            for name in DETERMINISTIC:
                keys = [f"{name}/{s}" for s in range(1, 6) if f"{name}/{s}" in theirs]
                if not keys:
                    continue
                diff = np.concatenate([np.abs(ours[k].astype(int) - theirs[k].astype(int)).ravel() for k in keys])
                lines.append(f"| {name} | {impl} | {100 * np.mean(diff > 0):.2f} % | {diff.max()} |")
    return "\n".join(lines)


def table(results: list[dict]) -> str:
    """Markdown: the machine, then per corruption/severity each implementation's CPU ms per image (median of the
    interleaved rounds), corruptgen's speed relative to the fastest other implementation (its CPU ms ÷ ours; > 1:
    corruptgen faster) and that ratio's range over the rounds (how far apart the repeated measurements were)."""
    import math

    ours = next(r for r in results if r["impl"] == "corruptgen")
    others = [r for r in results if r["impl"] != "corruptgen"]
    versions = "; ".join(f"{r['impl']}: numpy {r.get('versions', {}).get('numpy', '?')}" for r in results)
    lines = [
        f"size {ours['size']}×{ours['size']}, corruptgen family `{ours['family']}`, one thread per implementation, "
        f"CPU ms per image (median of {RUNS} interleaved rounds of ≥ {MIN_SECONDS} s); "
        f"{describe_machine(ours.get('machine', {}))}; {versions}",
        "",
        "| corruption/severity | "
        + " | ".join(r["impl"] for r in results)
        + " | vs fastest other | range over rounds |",
        "|---" * (len(results) + 3) + "|",
    ]
    logs, errors = [], set()
    for key, row in ours["rows"].items():
        cells = []
        for r in results:
            cell = r["rows"].get(key)
            if cell and "error" in cell:
                errors.add(f"{r['impl']} {key.split('/')[0]}: {cell['error']}")
            cells.append(
                "fails¹" if cell and "error" in cell else f"{1e3 * cell['cpu_s_per_img']:.2f}" if cell else "–"
            )
            if cell and "regimes" in cell:
                cells[-1] += f" ({cell['regimes'][0] if len(set(cell['regimes'])) == 1 else 'mixed'})"
        theirs = [r["rows"][key] for r in others if key in r["rows"] and "error" not in r["rows"][key]]
        ratio, spread = "–", "–"
        if theirs and "error" not in row:
            best = min(c["cpu_s_per_img"] for c in theirs)
            logs.append(math.log(best / row["cpu_s_per_img"]))
            ratio = f"{best / row['cpu_s_per_img']:.2f}×"
            rounds = [min(c["cpu_runs"][i] for c in theirs) / row["cpu_runs"][i] for i in range(len(row["cpu_runs"]))]
            spread = f"{min(rounds):.2f}–{max(rounds):.2f}×"
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {ratio} | {spread} |")
    sums = []
    for r in results:
        cells = [r["rows"].get(k, {}) for k in ours["rows"]]
        if all("cpu_s_per_img" in c for c in cells):
            sums.append(f"{r['impl']} {1e3 * sum(c['cpu_s_per_img'] for c in cells):.2f}")
    lines.append(f"\nsum over the {len(ours['rows'])} rows, CPU ms per image: {', '.join(sums)}")
    if any("regimes" in row for row in ours["rows"].values()):
        lines.append(f"\n(table): corruptgen's brightness and saturate through their exact colour table, as in a "
                     f"worker that renders ≥ {ours.get('table_break_even') or '?':,} images of one severity at this "
                     f"size (the break-even of `imagenet_c/_hsv_table.py`; the timed runs follow it); a smaller build "
                     f"runs the exact kernel (kernel), see \"Exact colour tables\"")  # fmt: skip
    if errors:
        lines.append("\n¹ " + "; ".join(sorted(errors)))
    if logs:
        lines.append(f"\ngeometric mean vs the fastest other implementation: {math.exp(sum(logs) / len(logs)):.2f}× "
                     f"(slowest {math.exp(min(logs)):.2f}×)")  # fmt: skip
    return "\n".join(lines)


def write_region(doc: Path, name: str, text: str) -> None:
    """Replace what stands between ``<!-- bench_peers:NAME -->`` and ``<!-- /bench_peers:NAME -->`` in ``doc``."""
    _write_region(doc, name, text, tag="bench_peers")


def _as_list(value: dict | list) -> list[dict]:
    return value if isinstance(value, list) else [value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["all", "table", "serve", "outputs", "fidelity"])
    parser.add_argument("files", nargs="*", help="table: result JSON files")
    parser.add_argument("--impl", default="corruptgen")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--family", default=None)
    parser.add_argument("--severities", default="3")
    parser.add_argument("--names", default=",".join(NAMES))
    parser.add_argument("--peer-python", default=None, help="python of the virtual environment holding the peers")
    parser.add_argument("--no-reference", action="store_true", help="leave out the reference scripts' column")
    parser.add_argument("--out", default=None, help="write the JSON results here")
    parser.add_argument("--doc", default=None, help="also write the table into this page's bench_peers region")
    parser.add_argument("--region", default=None, help="the region's name (default: the size)")
    args = parser.parse_args()
    severities = [int(s) for s in args.severities.split(",")]
    names = [n for n in args.names.split(",") if n]
    if args.mode == "serve":
        serve(args.impl, args.size, args.family)
        return 0
    if args.mode == "outputs":
        outputs(args.impl, args.size, args.out)
        return 0
    if args.mode == "fidelity":
        text = fidelity(args.peer_python, args.size)
        print(text)
        if args.doc:
            write_region(Path(args.doc), args.region or f"fidelity-{args.size}", text)
        return 0
    if args.mode == "table":
        results = [run for f in args.files for run in _as_list(json.loads(Path(f).read_text()))]
    else:
        results = interleaved(args.size, args.family, severities, names, args.peer_python, not args.no_reference)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))
    text = table(results)
    print(text)
    if args.doc:
        write_region(Path(args.doc), args.region or str(results[0]["size"]), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark corruptgen's batched steerable-pyramid VIF against single-image baselines on the same images.

    python scripts/bench_vif.py [--threads 1] [--repeats 3] [--device cpu] [--baseline-n 64]

Images: 8 real photos from scikit-image, preprocessed like Syn2Nat (Resize 256 INTER_AREA + CenterCrop 224),
each corrupted 8 ways (Gaussian blur, Gaussian noise, JPEG, contrast, brightness) -> 64 (clean, corrupted) pairs.

Compared, in the same run and on the same pairs:

* corruptgen ``vif`` (float64 and float32), all 64 pairs in one call;
* corruptgen ``VIFReference`` (one reference scored against its 8 corrupted candidates, VCR's search pattern);
* a straightforward single-image NumPy implementation of the same algorithm on ``pyrtools`` (the code VCR's
  toolbox runs; falls back to an own scipy.ndimage pyramid, clearly labelled, when pyrtools is missing);
* sewar's ``vifp`` (pixel-domain VIF-P, a different measure) and corruptgen's ``vif_p`` for reference.

"per core" throughput = images per second of process CPU time (robust on a shared machine); wall-clock
throughput is printed too. Also prints the max deviation of corruptgen's VIF from the baseline on the 64 pairs and
from published reference values when ``--reference-values FILE`` names them (a JSON file ``{"values": ...}`` of VIF
scores of the astronaut photo against its blurred and JPEG versions, as the VCR toolbox computes them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import skimage.data
import skimage.filters
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from corruptgen.bench.baselines import gray, pyramid_pyrtools, pyramid_scipy, vif_numpy  # noqa: E402
from corruptgen.bench.timing import describe_threads, fix_threads, time_work  # noqa: E402
from corruptgen.family.preprocess import get_preprocess  # noqa: E402
from corruptgen.quality import VIFReference, vif, vif_p  # noqa: E402

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry", "retina")


# ------------------------------------------------------------------------------------------------ images


def photos() -> list[np.ndarray]:
    pre = get_preprocess("syn2nat")
    imgs = [getattr(skimage.data, name)() for name in PHOTOS]
    imgs.append(skimage.data.stereo_motorcycle()[0])
    return [pre(img) for img in imgs]


def _jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def _blur(img: np.ndarray, sigma: float) -> np.ndarray:
    out = skimage.filters.gaussian(img / 255.0, sigma=sigma, channel_axis=2)
    return (np.clip(out, 0, 1) * 255).astype(np.uint8)


def corruptions(img: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    x = img / 255.0
    noise = lambda s: (np.clip(x + rng.normal(0, s, x.shape), 0, 1) * 255).astype(np.uint8)  # noqa: E731
    return [
        _blur(img, 1.0),
        _blur(img, 2.5),
        noise(0.04),
        noise(0.12),
        _jpeg(img, 10),
        _jpeg(img, 40),
        (np.clip((x - 0.5) * 0.5 + 0.5, 0, 1) * 255).astype(np.uint8),  # contrast 0.5
        (np.clip(x + 0.25, 0, 1) * 255).astype(np.uint8),  # brightness +0.25
    ]


def make_pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    refs, dists = [], []
    for img in photos():
        for d in corruptions(img, rng):
            refs.append(img)
            dists.append(d)
    return np.stack(refs), np.stack(dists)


# ------------------------------------------------------------------------------------------------ baseline
# (the single-image NumPy VIF and its pyramids live in corruptgen.bench.baselines, shared with `corruptgen bench`)

_pyramid_pyrtools, _pyramid_scipy = pyramid_pyrtools, pyramid_scipy


# ------------------------------------------------------------------------------------------------ timing


def timed(fn, repeats: int, n_images: int) -> tuple[object, float, float]:
    """(result, median img/s wall, median img per CPU-second) by ``corruptgen.bench.timing.time_work``: warm-up, then
    the median of ``repeats`` runs of >= 0.5 s each (``fn`` is repeated within a run)."""
    out: list[object] = []

    def work() -> int:
        out[:] = [fn()]
        return n_images

    rec = time_work(work, runs=repeats)
    return out[0], rec["images_per_s"], 1 / rec["cpu_s_per_image"]


def reference_deviation(device: str, reference: Path) -> dict[str, float]:
    ref = json.loads(reference.read_text())["values"]
    a = skimage.data.astronaut()
    dist = {"identity": a}
    for s in (0.5, 1.0, 2.0, 4.0):
        dist[f"gaussian_blur_sigma{s}"] = _blur(a, s)
    for q in (10, 50):
        dist[f"jpeg_q{q}"] = _jpeg(a, q)
    out = {}
    for dtype in (torch.float64, torch.float32):
        got = vif(a, np.stack(list(dist.values())), device=device, dtype=dtype).cpu().numpy()
        out[str(dtype).replace("torch.", "")] = {
            name: abs(float(v) - ref[f"astronaut/{name}"]) for name, v in zip(dist, got, strict=True)
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: per-core numbers)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--baseline-n", type=int, default=64, help="pairs timed for the single-image baselines")
    ap.add_argument(
        "--reference-values",
        type=Path,
        default=None,
        metavar="FILE",
        help="published VIF reference values to compare with (JSON; default: no comparison)",
    )
    args = ap.parse_args(argv)
    threads = fix_threads(args.threads)

    refs, dists = make_pairs()
    n = len(refs)
    n_base = min(args.baseline_n, n)
    g_ref = np.stack([gray(r) for r in refs])
    g_dist = np.stack([gray(d) for d in dists])
    print(
        f"VIF benchmark: {n} pairs of {refs.shape[1]}x{refs.shape[2]} RGB (8 photos x 8 corruptions), "
        f"device {args.device}, torch {torch.__version__}, torch threads = {torch.get_num_threads()}, "
        f"median of {args.repeats} runs >= 0.5 s after a warm-up"
    )
    print(describe_threads(threads))
    rows = []  # (label, img/s wall, img/CPU-s, values or None)

    dev = torch.device(args.device)
    t_ref = torch.from_numpy(refs).permute(0, 3, 1, 2).to(dev)
    t_dist = torch.from_numpy(dists).permute(0, 3, 1, 2).to(dev)
    for dtype in (torch.float64, torch.float32):
        name = str(dtype).replace("torch.", "")

        def batch(dtype=dtype):
            out = vif(t_ref, t_dist, dtype=dtype)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            return out.cpu().numpy()

        values, wall, cpu = timed(batch, args.repeats, n)
        rows.append((f"corruptgen vif {name}, {n} pairs in one call", wall, cpu, values))

        def search(dtype=dtype):
            out = [VIFReference(t_ref[i : i + 1], dtype=dtype).score(t_dist[i : i + 8]) for i in range(0, n, 8)]
            if dev.type == "cuda":
                torch.cuda.synchronize()
            return torch.cat(out).cpu().numpy()

        values_s, wall, cpu = timed(search, args.repeats, n)
        rows.append((f"corruptgen VIFReference {name}, 1 ref x 8 cands", wall, cpu, values_s))

    try:
        import pyrtools  # noqa: F401

        pyramid, base_label = _pyramid_pyrtools, "NumPy + pyrtools, single image (VCR's code path)"
    except ImportError:
        print("note: pyrtools is not installed (pip install pyrtools); baseline = own scipy.ndimage pyramid")
        pyramid, base_label = _pyramid_scipy, "NumPy + own scipy pyramid, single image (NOT pyrtools)"
    base_vals, wall, cpu = timed(
        lambda: np.array([vif_numpy(g_ref[i], g_dist[i], pyramid) for i in range(n_base)]), args.repeats, n_base
    )
    rows.append((base_label, wall, cpu, base_vals))
    base_cpu = cpu

    try:
        from sewar.full_ref import vifp as sewar_vifp

        sew, wall, cpu = timed(
            lambda: np.array([sewar_vifp(g_ref[i], g_dist[i]) for i in range(n_base)]), args.repeats, n_base
        )
        rows.append(("sewar vifp, pixel VIF-P on gray, single image", wall, cpu, sew))
    except ImportError:
        sew = None
        print("note: sewar is not installed (pip install sewar); skipping its vifp")

    ours_p, wall, cpu = timed(lambda: vif_p(t_ref, t_dist).cpu().numpy(), args.repeats, n)
    rows.append(("corruptgen vif_p float64 (pixel VIF-P), one call", wall, cpu, ours_p))

    print(f"\n{'method':58s} {'img/s wall':>11s} {'img/CPU-s':>10s} {'x baseline':>11s}")
    for label, wall, cpu, _ in rows:
        print(f"{label:58s} {wall:11.1f} {cpu:10.1f} {cpu / base_cpu:10.1f}x")
    print("(x baseline = ratio of img per CPU-second, i.e. per core, to the single-image NumPy implementation)")

    print(f"\nagreement on the {n_base} benchmark pairs:")
    for label, *_, values in rows[:4]:
        dev_max = float(np.max(np.abs(values[:n_base] - base_vals)))
        print(f"  max |VIF - baseline| = {dev_max:.2e}   {label}")
    if sew is not None:
        print(f"  max |corruptgen vif_p - sewar vifp| = {float(np.max(np.abs(ours_p[:n_base] - sew))):.2e}")
    print(f"  VIF range on these pairs: {float(base_vals.min()):.3f} .. {float(base_vals.max()):.3f}")

    if args.reference_values is not None:
        devs = reference_deviation(args.device, args.reference_values)
        print(f"\nmax deviation from {args.reference_values.name} (astronaut 512x512; tolerance 1e-3, jpeg 5e-3):")
        for dtype, d in devs.items():
            worst = max(d, key=d.get)
            detail = ", ".join(f"{k} {v:.1e}" for k, v in d.items())
            print(f"  {dtype}: {max(d.values()):.2e} (worst: {worst}); {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

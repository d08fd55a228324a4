"""``corruptgen bench``: per-stage throughput of each benchmark family next to the baselines of issues A–E.

>>> from corruptgen.bench import run_bench, format_table
>>> result = run_bench(["syn2nat"], images=4)  # doctest: +SKIP
>>> print(format_table(result))  # doctest: +SKIP

Every family runs on the same inputs (``source`` cycled to ``images`` files in a temporary directory); see
:mod:`corruptgen.bench.stages` for what each stage measures and :mod:`corruptgen.bench.baselines` for the baselines.
"""

from __future__ import annotations

import difflib
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from .families import bench_family
from .stages import FAMILIES, Settings, materialize_inputs
from .timing import MIN_RUN_S, RUNS, describe_threads, fix_threads

__all__ = ["FAMILIES", "format_table", "parse_families", "peak_rss_mib", "run_bench"]


def parse_families(value: str | Sequence[str] | None) -> list[str]:
    """``None``/``"all"`` → every family; else comma-separated names (``imagenet_c`` is accepted for imagenet-c)."""
    if value is None:
        return list(FAMILIES)
    tokens = [t.strip() for t in (value.split(",") if isinstance(value, str) else value) if t.strip()]
    if not tokens:
        raise CorruptgenError("--families is empty")
    if tokens == ["all"]:
        return list(FAMILIES)
    out = []
    for token in tokens:
        name = _bench_name(token)
        if name not in out:
            out.append(name)
    return out


def _bench_name(token: str) -> str:
    """The bench family ``token`` names: a family's name or alias (``imagenet_c``), in any case."""
    name = token.lower()
    if name not in FAMILIES:
        from ..family.benchmark import FAMILIES as REGISTERED

        name = REGISTERED.canonical(name) if name in REGISTERED else name
    if name not in FAMILIES:
        near = difflib.get_close_matches(token.lower(), FAMILIES, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(near)}? " if near else ""
        raise CorruptgenError(f"unknown family {token!r} for bench; {hint}choose from {', '.join(FAMILIES)} (or all)")
    return name


def peak_rss_mib() -> dict[str, float]:
    """Peak resident set size so far of this process and of its waited-for children, in MiB (``getrusage``)."""
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 1024**2  # ru_maxrss: KiB on Linux, bytes on macOS
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return {"self": round(own, 1), "children": round(children, 1)}


def _machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }


def _torch_info(device: str) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"version": torch.__version__, "threads": torch.get_num_threads(), "device": device,
                            "cuda_available": torch.cuda.is_available()}  # fmt: skip
    if device.startswith("cuda"):
        info["device_name"] = torch.cuda.get_device_name(torch.device(device))
    return info


def run_bench(
    families: str | Sequence[str] | None = None,
    *,
    source: str = "samples",
    images: int | None = None,
    device: str = "cpu",
    batch_size: int = 64,
    repeats: int = RUNS,
    io_threads: int | None = None,
    threads: int | None = 1,
    min_run_s: float = MIN_RUN_S,
    progress: Callable[[str], None] | None = None,
    on_family: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Benchmark ``families`` (default: syn2nat, imagenet-c, vcr, opticsbench and eval) on ``images`` inputs of
    ``source`` (default: all of it, at most 10; cycled when it has fewer) and return a JSON-safe dict.

    Keys: ``machine``, ``torch``, ``threads``, ``settings``, ``inputs``, ``families`` (per family: ``stages``
    ``{name: {images, seconds, images_per_s, cpu_s_per_image, runs}}``, ``end_to_end``, ``baselines``, ``ratios``
    (ours ÷ baseline in images/s), ``ratios_cpu`` (the same in images per CPU-second), ``peak_rss_mib``,
    ``seconds``), ``peak_rss_mib`` and ``seconds``. ``io_threads``: the end-to-end builds'
    schedule (default: the engine's for ``device``). ``progress`` receives one line per step;
    ``on_family`` the result so far after each family (``complete`` false until the last), so a run cut short
    still leaves the families it finished.

    Every measurement: ``threads`` torch/OpenCV threads (``None``: leave them; stated under ``threads``), one
    warm-up, the median of ``repeats`` timed runs of at least ``min_run_s`` seconds each, and ``cpu_s_per_image``
    beside ``images_per_s`` (:mod:`corruptgen.bench.timing`).
    """
    from ..engine.options import check_device as _check_device

    names = parse_families(families)
    for flag, value in (("--images", images), ("--batch-size", batch_size), ("--repeats", repeats)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise CorruptgenError(f"{flag} must be a positive integer, got {value!r}")
    _check_device(device)
    settings = Settings(device=device, batch_size=batch_size, repeats=repeats, io_threads=io_threads,
                        min_run_s=min_run_s, threads=threads)  # fmt: skip
    thread_settings = fix_threads(threads)
    say = progress or (lambda line: None)
    t_start = time.perf_counter()
    result: dict[str, Any] = {
        "corruptgen_bench": 1,
        "machine": _machine(),
        "torch": _torch_info(device),
        "threads": thread_settings,
        "settings": {
            "families": names,
            "source": source,
            "images": images,
            "device": device,
            "batch_size": batch_size,
            "repeats": repeats,
            "min_run_s": min_run_s,
            "io_threads": io_threads,
            "quality": settings.quality,
            "model": settings.model,
        },
        "families": {},
        "complete": False,
    }
    with tempfile.TemporaryDirectory(prefix="corruptgen-bench-") as tmp:
        workdir = Path(tmp)
        inputs = materialize_inputs(source, images, workdir / "inputs")
        result["inputs"] = {"source": source, "count": inputs.count, "source_count": inputs.source_count}
        say(f"bench: {inputs.count} inputs from {source} ({inputs.source_count} in the source), device {device}")
        shared: dict[str, Any] = {}
        for name in names:
            say(f"bench: {name} ...")
            t0 = time.perf_counter()
            try:
                fam = bench_family(name, inputs, settings, workdir, shared)
            except CorruptgenError as e:  # e.g. a missing kernel stack: report it, bench the other families
                fam = {"error": str(e), "stages": {}, "end_to_end": None, "baselines": {}, "ratios": {},
                       "ratios_cpu": {}}  # fmt: skip
                say(f"bench: {name}: error: {e}")
            fam["seconds"] = round(time.perf_counter() - t0, 3)
            fam["peak_rss_mib"] = peak_rss_mib()
            for key in ("build", "end_to_end"):  # temporary paths mean nothing after the run
                if isinstance(fam.get(key), dict):
                    fam[key].pop("build_dir", None)
            fam.pop("build", None)
            result["families"][name] = fam
            say(f"bench: {name} done in {fam['seconds']:.1f} s")
            if on_family is not None and name != names[-1]:
                on_family(result)
    result["peak_rss_mib"] = peak_rss_mib()
    result["seconds"] = round(time.perf_counter() - t_start, 3)
    result["complete"] = True
    return result


# ------------------------------------------------------------------------------------------------ table

_STAGE_LABELS = {
    "decode": "decode (read+decode+preprocess)",
    "corrupt": "corrupt",
    "vif": "vif (batched VIF evaluations)",
    "encode": "encode",
    "write": "write (tar shards)",
}


def _num(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'n/a':>{width}s}" if value is None else f"{value:{width}.{digits}f}"


def _row(rec: dict[str, Any]) -> str:
    """images, seconds (of the median run), images/s and CPU-seconds per image (median over the runs)."""
    return (f"{rec['images']:7d} {rec['seconds']:8.3f} {_num(rec['images_per_s'], 9)} "
            f"{_num(rec.get('cpu_s_per_image'), 10, 4)}")  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """The human-readable table of a :func:`run_bench` result."""
    s, m, t = result["settings"], result["machine"], result["torch"]
    lines = [
        f"corruptgen bench: {result['inputs']['count']} inputs from {s['source']}, device {t['device']}"
        + (f" ({t['device_name']})" if t.get("device_name") else "")
        + f", batch {s['batch_size']}; median of {s['repeats']} runs of >= {s['min_run_s']} s after a warm-up;"
        f" torch {t['version']}, Python {m['python']}, {m['cpus_usable'] or m['cpus']} CPUs",
        describe_threads(result["threads"]),
        f"{'family':12s} {'measurement':50s} {'images':>7s} {'seconds':>8s} {'images/s':>9s} {'CPU-s/img':>10s}",
    ]
    for fam, r in result["families"].items():
        label = fam if fam != "eval" else "eval"
        for stage, rec in r["stages"].items():
            name = _STAGE_LABELS.get(stage, stage)
            if stage == "encode":
                name = f"encode (jpg q{s['quality']})"
            lines.append(f"{label:12s} {name:50s} {_row(rec)}")
        if r.get("error"):
            lines.append(f"{label:12s} error: {r['error']}")
        e = r["end_to_end"] or {}
        what = (
            "end to end: corruptgen build, fresh process" if fam != "eval" else "end to end: corruptgen.eval.evaluate"
        )
        if e:
            lines.append(f"{label:12s} {what:50s} {_row(e)}")
        for base, rec in r["baselines"].items():
            if "unavailable" in rec:
                lines.append(f"{label:12s} {'baseline ' + base:50s} {rec['unavailable']}")
                continue
            lines.append(f"{label:12s} {('baseline ' + base)[:50]:50s} {_row(rec)}")
        for name, value in r["ratios"].items():
            shown = "n/a (baseline unavailable)" if value is None else f"{value:.2f}x"
            cpu = (r.get("ratios_cpu") or {}).get(name)
            lines.append(f"{label:12s} {'ratio ' + name:50s} {shown:>26s}"
                         + (f"  (per CPU-second {cpu:.2f}x)" if cpu else ""))  # fmt: skip
        rss = r["peak_rss_mib"]
        lines.append(f"{label:12s} {'peak RSS so far (MiB, self / children)':50s} "
                     f"{rss['self']:>13.0f} / {rss['children']:.0f}")  # fmt: skip
    rss = result["peak_rss_mib"]
    lines.append(f"total {result['seconds']:.1f} s; peak RSS {rss['self']:.0f} MiB (self), {rss['children']:.0f} MiB "
                 "(children); ratios are ours / baseline in images/s (> 1: ours faster)")  # fmt: skip
    return "\n".join(lines)

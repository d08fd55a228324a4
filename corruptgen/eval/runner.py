"""Run models over a build: stream its shards, decode in DataLoader workers, batch, predict, score, write results.

The data are read once for all models. Per image the top-5 classes and probabilities are kept (one row per frame of
an ImageNet-P sequence), which is all every metric needs; they are saved as Parquet so ``corruptgen report
--recompute`` can rescore without the model.
"""

from __future__ import annotations

import math
import os
import platform
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import CorruptgenError
from ..io.tarread import Limits
from ..models.loading import DEFAULT_MODEL, EvalModel, load_model
from ..progress import progress_bar
from ..wording import counted
from .data import (
    EvalSource,
    SubsetData,
    check_shards,
    decode_image,
    fit_to,
    iter_samples,
    open_source,
    subset_dataset,
    verify_shards,
)
from .labels import ModelLabels, plan_labels
from .metrics import MetricOptions, compute_metrics, detect_family
from .metrics.vcr import map_to_16, probs_to_16
from .predictions import TOPK, Predictions, build_predictions
from .results import json_safe, slug, write_json
from .thesis_adversarial import mark_surrogate
from .whitebox import WhiteBox, attack_batch, classifiers, plan_whitebox

RESULTS_FORMAT = 1
_META_KEYS = ("source_key", "corruption", "category", "severity", "frames", "benchmark")
_PARAM_KEYS = ("compare", "stride", "difficulty", "delta_v", "vif", "target_delta_v")


def _slim(meta: dict[str, Any]) -> dict[str, Any]:
    out = {k: meta.get(k) for k in _META_KEYS if k in meta}
    params = meta.get("params") or {}
    out.update({k: params[k] for k in _PARAM_KEYS if isinstance(params, dict) and k in params})
    return out


def _delta_v(meta: dict[str, Any]) -> float:
    """Δv of a VCR sample: ``params.delta_v``, else max(0, 1 − ``params.vif``), else NaN."""
    for key, fn in (("delta_v", float), ("vif", lambda v: max(0.0, 1.0 - float(v)))):
        if meta.get(key) is not None:
            try:
                return fn(meta[key])
            except (TypeError, ValueError):
                return math.nan
    return math.nan


class _FrameStream(torch.utils.data.IterableDataset):
    """Decoded frames of the selected subsets; workers split shards (or samples, when shards are fewer)."""

    def __init__(self, parts: list[tuple[int, SubsetData, Any, list[str]]], size: int, limit: int | None,
                 limits: Limits) -> None:  # fmt: skip
        super().__init__()
        self.parts, self.size, self.limit, self.limits = parts, size, limit, limits

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        w, n = (0, 1) if info is None else (info.id, info.num_workers)
        for si, sd, ds, imgs in self.parts:
            stream, mine = ds, None
            if n > 1:
                if not hasattr(ds, "n_shards"):  # an Arrow-backed Dataset: split its rows
                    stream = ds.shard(n, w, contiguous=True) if self.limit is None else ds
                elif ds.n_shards >= n and self.limit is None:
                    stream = ds.shard(n, w)
                if stream is ds:
                    mine = w
            described = False
            for i, sample in enumerate(iter_samples(sd, stream, imgs, limit=self.limit)):
                if mine is not None and i % n != mine:
                    continue
                meta = _slim(sample.meta)
                source_key, dv = str(meta.get("source_key") or sample.key), _delta_v(meta)
                for t, data in enumerate(sample.frames):
                    img = fit_to(decode_image(data, f"{sample.key} ({sd.name})", self.limits), self.size)
                    # the subset's description travels once per worker; per-row fields on every row
                    yield img, (si, sample.key, t, sample.label, source_key, dv, None if described else meta)
                    described = True


def _collate(batch):
    images = torch.from_numpy(np.stack([b[0] for b in batch]))
    return images, [b[1] for b in batch]


@dataclass
class _Collected:
    top5: list[np.ndarray] = field(default_factory=list)
    prob5: list[np.ndarray] = field(default_factory=list)
    pred16_prob: list[np.ndarray] = field(default_factory=list)
    checked: bool = False
    labels: ModelLabels | None = None


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("corruptgen", "torch", "numpy", "datasets", "pyarrow", "scipy", "opencv-python-headless"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _check_device(device: str) -> None:
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise CorruptgenError(f"--device {device}: CUDA is not available here (use --device cpu)")
    if not re.match(r"^(cpu|cuda(:\d+)?|mps)$", device):
        raise CorruptgenError(f"unknown --device {device!r} (cpu, cuda, cuda:N)")


@dataclass
class EvalRun:
    """What :func:`evaluate` produced: one results dict (and predictions) per model, and the files written."""

    results: list[dict[str, Any]]
    predictions: list[Predictions]
    files: list[Path]

    def summary(self) -> str:
        lines = []
        for r in self.results:
            s = r["metrics"]["summary"]
            fam = r["metrics"]["family"]
            where = r["data"]["benchmark"] or r["data"]["source"]
            seconds = r["eval"]["seconds"]
            images = counted(r["eval"]["images"], "image")
            parts = [
                f"{r['model']['name']} on {where} ({fam}):",
                f"{images} ({_labelled(r)} labelled) in {seconds:.1f}s",
            ]
            for key, label in (("clean_top1", "clean top-1"), ("mean_top1", "mean corrupted top-1")):
                if s.get(key) is not None:
                    parts.append(f"{label} {100 * s[key]:.2f}%")
            lines.append(" ".join(parts))
        return "\n".join(lines)


def _labelled(result: dict) -> int:
    return sum(int(row.get("labelled") or 0) for row in result["metrics"]["subsets"].values())


def evaluate(
    source: str | os.PathLike | EvalSource,
    models: Sequence[str | EvalModel] = (DEFAULT_MODEL,),
    *,
    subsets: Sequence[str] | str | None = None,
    clean: bool = True,
    out: str | os.PathLike | None = None,
    device: str = "cpu",
    batch_size: int = 64,
    workers: int = 0,
    streaming: bool | None = None,
    revision: str | None = None,
    limit: int | None = None,
    verify: bool = True,
    predictions: bool = True,
    report: bool = True,
    progress: bool = False,
    options: MetricOptions | None = None,
    labels: str = "check",
    class_map: str | os.PathLike | dict | None = None,
    attacks: str | Sequence[str] | None = None,
) -> EvalRun:
    """Evaluate ``models`` on a build (a local directory or a Hub dataset id); write results when ``out`` is set.

    ``labels``: ``"check"`` (default) refuses a model whose classes are not the build's label space (see
    :mod:`corruptgen.eval.labels`), ``"match"`` states that they are, ``"ignore"`` scores without labels (label-free
    metrics only); ``class_map`` (a JSON file or dict ``{model class: build class}``) maps predictions onto the
    build's classes. Writes ``<out>/results-<model>.json`` (every metric, model and data provenance, versions),
    ``<out>/predictions-<model>.parquet`` and, with ``report``, ``<out>/report.md`` and ``<out>/plots/*.png``.
    ``attacks`` (``"pgd:eps=0.04,cw_l2"``) attacks every model on the build's ``clean`` subset, white-box; each attack
    is reported as a subset ``whitebox_<attack>`` (:mod:`corruptgen.eval.whitebox`).
    """
    _check_device(device)
    bad = {"--batch-size": batch_size < 1, "--workers": workers < 0, "--limit": limit is not None and limit < 1}
    if any(bad.values()):
        shown = {"--batch-size": batch_size, "--workers": workers, "--limit": limit}
        flag = next(flag for flag, wrong in bad.items() if wrong)
        least = 0 if flag == "--workers" else 1
        raise CorruptgenError(f"{flag} must be at least {least}, got {shown[flag]}")
    options = options or MetricOptions()
    src = source if isinstance(source, EvalSource) else open_source(source, streaming=streaming, revision=revision)
    selected = src.select(subsets, clean=clean)
    whitebox = plan_whitebox(attacks, [sd.name for sd in selected], src.spec, built_clean="clean" in src.subsets)
    check_shards(src, selected)  # before anything opens a shard: a FIFO would block, a huge member fill memory
    if verify:
        verify_shards(src, selected)
    nets = [load_model(m, device) for m in (models or [DEFAULT_MODEL])]
    names = [m.name for m in nets]
    if len(set(names)) != len(names):
        raise CorruptgenError(f"two models share a name ({', '.join(names)}); name them with --model NAME=SPEC")
    plans = plan_labels(src, selected, nets, labels, class_map)
    if labels == "ignore":
        options = replace(options, accuracy=False)
    if whitebox and (labels == "ignore" or class_map is not None):
        other = "--labels ignore" if labels == "ignore" else "--class-map"
        raise CorruptgenError(f"--attacks attacks each model's own classes with the build's labels: it cannot be "
                              f"combined with {other}")  # fmt: skip
    attackers = classifiers(nets) if whitebox else []
    size, limits = nets[0].input_size, Limits.of(src.manifest)
    parts = []
    for si, sd in enumerate(selected):
        ds, imgs = subset_dataset(sd, src.streaming)
        parts.append((si, sd, ds, imgs))
    loader = torch.utils.data.DataLoader(
        _FrameStream(parts, size, limit, limits), batch_size=batch_size, num_workers=workers, collate_fn=_collate,
        pin_memory=device.startswith("cuda"), prefetch_factor=4 if workers else None,
        multiprocessing_context="spawn" if workers else None,  # never a fork of this threaded process (as torch_loader)
    )  # fmt: skip
    total = None
    if src.manifest:
        counts = [sd.info.get("samples") for sd in selected]
        total = sum(min(c, limit or c) for c in counts if c) if all(counts) else None
    bar = progress_bar(total, enabled=progress, desc="eval", unit="sample")
    collected = [_Collected(labels=plan) for plan in plans]
    recs: list[tuple] = []
    metas: dict[int, dict] = {}  # subset index → the JSON (slimmed) of one of its samples
    t0 = time.perf_counter()
    try:
        for images, batch_recs in loader:
            x = images.to(device, non_blocking=True)
            if labels == "ignore":
                batch_recs = [(*r[:3], -1, *r[4:]) for r in batch_recs]
            batch_labels = np.array([r[3] for r in batch_recs])
            logits = [_predict(net, x, batch_labels, col) for net, col in zip(nets, collected, strict=True)]
            for r in batch_recs:
                if r[6] is not None:
                    metas.setdefault(r[0], r[6])
            recs.extend(r[:6] for r in batch_recs)
            if whitebox:
                _attack_clean(whitebox, nets, attackers, x, batch_recs, logits, collected, recs)
            bar.update(sum(1 for r in batch_recs if r[2] == 0))
    except CorruptgenError:
        raise
    except Exception as e:  # a truncated shard, a worker crash: one clear line
        raise CorruptgenError(f"reading {src.spec} failed: {type(e).__name__}: {str(e).strip().splitlines()[-1]}"
                              ) from None  # fmt: skip
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    if not recs:
        raise CorruptgenError(f"no samples in the selected subsets of {src.spec}")
    subset_info = _subset_info(selected, metas)
    names = [sd.name for sd in selected]
    if whitebox:
        subset_info.update(whitebox.info())
        names += whitebox.names
    bench = src.benchmark or _first(metas, "benchmark")
    results, preds, files = [], [], []
    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for net, col, plan in zip(nets, collected, plans, strict=True):
        pred = _assemble(recs, names, subset_info, col, net, bench)
        family = detect_family(bench, pred)
        pred.meta["family"] = family
        result = {
            "corruptgen_results": RESULTS_FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "model": net.describe(),
            "data": {**src.provenance(selected), "family": family, "limit": limit, "subsets_info": subset_info,
                     "labels": plan.describe()},
            "eval": {"device": device, "batch_size": batch_size, "workers": workers, "streaming": src.streaming,
                     "images": len(recs), "seconds": seconds, "images_per_s": len(recs) / seconds if seconds else None,
                     "attacks": [s.label() for s in whitebox.specs] if whitebox else []},
            "versions": _versions(),
            "options": _describe_options(options),
            "metrics": compute_metrics(pred, family, options),
            "predictions": None,
        }  # fmt: skip
        mark_surrogate(result, src.manifest, net)  # a transfer set evaluated on its own surrogate is white-box
        if out_dir is not None:
            if predictions:
                ppath = out_dir / f"predictions-{slug(net.name)}.parquet"
                pred.to_parquet(ppath)
                result["predictions"] = ppath.name
                files.append(ppath)
            rpath = out_dir / f"results-{slug(net.name)}.json"
            write_json(rpath, result)
            result["_path"] = str(rpath)
            files.append(rpath)
        results.append(json_safe(result))
        preds.append(pred)
    if out_dir is not None and report:
        from .report import write_report

        files.extend(write_report(results, out_dir, options=options))
    return EvalRun(results, preds, files)


def _first(metas: dict[int, dict], key: str):
    return next((m.get(key) for m in metas.values() if m.get(key)), None)


def _predict(net: EvalModel, x: torch.Tensor, labels: np.ndarray, col: _Collected) -> torch.Tensor:
    logits = net(x)
    _record(net, logits, labels, col)
    return logits


def _attack_clean(whitebox: WhiteBox, nets, attackers, x: torch.Tensor, batch_recs, logits, collected, recs) -> None:
    """Attack each model on the clean images of the batch; one row per image and attack, after the batch's rows."""
    rows = [i for i, r in enumerate(batch_recs) if r[0] == whitebox.clean_index and r[2] == 0]
    if not rows:
        return
    index = torch.tensor(rows, device=x.device)
    labels = np.array([batch_recs[i][3] for i in rows])
    keys = [batch_recs[i][1] for i in rows]
    attacked = [attack_batch(whitebox, a, x[index], labels, lg[index], keys) for a, lg in zip(attackers, logits,
                                                                                              strict=True)]  # fmt: skip
    for k in range(len(whitebox.specs)):
        recs.extend((whitebox.first_index + k, *batch_recs[i][1:6]) for i in rows)
        for net, col, per_attack in zip(nets, collected, attacked, strict=True):
            _record(net, per_attack[k], labels, col)


def _record(net: EvalModel, logits: torch.Tensor, labels: np.ndarray, col: _Collected) -> None:
    """Keep the top-5 classes and probabilities of ``logits`` (and the 16-class probabilities for VCR)."""
    c = logits.shape[1]
    mapped = col.labels is not None and col.labels.mapped
    if not col.checked:
        if net.num_classes is not None and net.num_classes != c:
            raise CorruptgenError(f"model {net.name} declares {net.num_classes} classes but outputs {c}")
        if col.labels is not None:
            col.labels.check(c)
        col.checked = True
    if labels.size and labels.max() >= c and not mapped:
        raise CorruptgenError(f"label {int(labels.max())} is outside the {c} outputs of model {net.name}: the label "
                              "spaces do not match (although --labels match says they do)")  # fmt: skip
    probs = logits.softmax(1)
    p5, i5 = probs.topk(min(TOPK, c), dim=1)
    i5, p5 = i5.cpu().numpy(), p5.cpu().numpy()
    if mapped:
        i5 = col.labels.apply(i5)
    if c < TOPK:
        i5 = np.pad(i5, ((0, 0), (0, TOPK - c)), constant_values=-1)
        p5 = np.pad(p5, ((0, 0), (0, TOPK - c)))
    col.top5.append(i5)
    col.prob5.append(p5)
    if c == 1000 and not mapped:  # 16-class decisions for VCR's human comparison (kept only for VCR data)
        col.pred16_prob.append(probs_to_16(probs.cpu().numpy()))


def _subset_info(selected: Sequence[SubsetData], metas: dict) -> dict[str, dict[str, Any]]:
    info: dict[str, dict[str, Any]] = {}
    for si, sd in enumerate(selected):
        first = metas.get(si, {})
        corruption = first.get("corruption", sd.info.get("corruption"))
        info[sd.name] = {
            "corruption": None if corruption is None else str(corruption).split("/")[-1],
            "severity": first.get("severity", sd.info.get("severity")),
            "category": first.get("category", sd.info.get("category")),
            "frames": int(first.get("frames") or 1),
            **{k: first[k] for k in ("compare", "stride", "difficulty") if first.get(k) is not None},
        }
    return info


def _assemble(recs, names, subset_info, col: _Collected, net: EvalModel, bench: str | None) -> Predictions:
    si, key, frame, label, source_key, dv = zip(*recs, strict=True)
    rows: dict[str, Any] = {
        "subset": [names[i] for i in si],
        "key": [sys.intern(k) for k in key],
        "source_key": [sys.intern(k) for k in source_key],
        "frame": frame,
        "label": label,
        "delta_v": dv,
    }
    rows["top5"] = np.concatenate(col.top5)
    rows["prob5"] = np.concatenate(col.prob5)
    vcr = detect_family(bench) == "vcr" or bool(np.isfinite(np.asarray(rows["delta_v"], dtype=float)).any())
    with16 = bool(col.pred16_prob) and vcr
    if with16:
        rows["pred16"] = map_to_16(rows["top5"][:, 0])
        rows["pred16_prob"] = np.concatenate(col.pred16_prob)
    meta = {"benchmark": bench, "model": net.name, "num_classes": net.num_classes}
    return build_predictions(rows, subset_info, meta, with16).sorted()


def _describe_options(options: MetricOptions) -> dict[str, Any]:
    return {"reference": (options.reference or {}).get("_path"), "human_data": sorted(options.humans or {}),
            "vcr": options.vcr.to_dict(), "er_beta": options.er_beta, "er_intercept": options.er_intercept,
            "er_logit": options.er_logit, "accuracy": options.accuracy}  # fmt: skip

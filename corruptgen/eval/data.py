"""Reading a build for evaluation: a local build directory or a Hub dataset repository, through one code path.

Both are a set of WebDataset shards ``data/<subset>/*.tar`` (plus ``manifest.json`` for corruptgen builds). Each
subset's shards are read with Hugging Face ``datasets`` (``load_dataset("webdataset", data_files=...)``, streaming or
not) with declared features (images not decoded, JSON kept whole), and images are decoded here with OpenCV, each
after its header's pixel count is checked against the build's limit (:class:`~corruptgen.io.tarread.Limits`).
Local shards are checked before anything reads them (:func:`check_shards`: regular files, no member over its size
cap) and against the manifest's sha256.
"""

from __future__ import annotations

import difflib
import json
import os
import tarfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..errors import CorruptgenError
from ..io.decode import BadImageError
from ..io.float_images import decode_npy, is_npy
from ..io.layout import ARRAY_EXTENSIONS, image_fields, shard_subset
from ..io.tarread import DEFAULT_LIMITS, Limits, ShardError, oversized
from ..wording import counted, some


def _unknown_subsets(unknown: list[str], subsets: list[str], spec: str) -> CorruptgenError:
    """One short line for ``--subsets`` names the build lacks: near names of the first (as ``build`` suggests), else
    how many subsets the build has and the first few (never all of a 76-subset build)."""
    close = difflib.get_close_matches(unknown[0].lower(), subsets, n=3, cutoff=0.5)  # subset names are lower case
    near = [name for name in subsets if name in close]  # in the build's order
    more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
    has = f"it has {counted(len(subsets), 'subset')}: {some(subsets, 4)}" if subsets else "it has no subsets"
    hint = f"did you mean {', '.join(near)}?" if near else has
    return CorruptgenError(f"unknown subset {unknown[0]!r}{more} in {spec}; {hint}")


@dataclass
class SubsetData:
    """One subset: its shard files (local paths or ``hf://`` URLs) and what the manifest says about it."""

    name: str
    files: list[str]
    relpaths: list[str]
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalSource:
    """A resolved build: where it is, its manifest (or None) and its subsets."""

    spec: str
    kind: str  # "local" | "hub"
    location: str
    manifest: dict[str, Any] | None
    subsets: dict[str, SubsetData]
    streaming: bool
    checksums: dict[str, str | None] = field(default_factory=dict)
    verified: bool = False

    @property
    def benchmark(self) -> str | None:
        return (self.manifest or {}).get("benchmark")

    def select(self, names: Sequence[str] | str | None, *, clean: bool = True) -> list[SubsetData]:
        """The named subsets (all by default), plus ``clean`` when present and ``clean`` is true."""
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        if not names:
            chosen = list(self.subsets)
        else:
            unknown = [n for n in names if n not in self.subsets]
            if unknown:
                raise _unknown_subsets(unknown, list(self.subsets), self.spec)
            chosen = list(dict.fromkeys(names))
        if clean and "clean" in self.subsets and "clean" not in chosen:
            chosen.insert(0, "clean")
        if not clean:
            chosen = [n for n in chosen if n != "clean"] or chosen
        return [self.subsets[n] for n in sorted(chosen, key=lambda n: (n != "clean", list(self.subsets).index(n)))]

    def provenance(self, selected: Sequence[SubsetData]) -> dict[str, Any]:
        """Where the data came from: plan id, benchmark and the sha256 of every shard read (a local build by its path
        relative to the folder the command ran in, or its last component: results are shared)."""
        from ..io.shown import shown_path

        m = self.manifest or {}
        rels = [r for s in selected for r in s.relpaths]
        where = {"source": shown_path(self.spec), "location": shown_path(self.location)}
        return {**where, "kind": self.kind, "benchmark": m.get("benchmark"),
                "plan_id": m.get("plan_id"), "build_complete": m.get("complete"), "build_versions": m.get("versions"),
                "shards": {r: self.checksums.get(r) for r in rels}, "checksums_verified": self.verified,
                "subsets": [s.name for s in selected]}  # fmt: skip


def _sha256(path: str) -> str:
    from ..io.hashing import sha256_file

    return sha256_file(path)


def _subsets_from_paths(rels: Sequence[str], to_file) -> dict[str, SubsetData]:
    out: dict[str, SubsetData] = {}
    for rel in sorted(rels):
        subset = shard_subset(rel)
        if subset is None:
            continue
        sd = out.setdefault(subset, SubsetData(subset, [], []))
        sd.files.append(to_file(rel))
        sd.relpaths.append(rel)
    return out


def _attach_manifest(subsets: dict[str, SubsetData], manifest: dict | None) -> dict[str, str | None]:
    if not manifest:
        return {}
    for name, sd in subsets.items():
        sd.info = dict((manifest.get("subsets") or {}).get(name, {}))
    return {rel: rec.get("sha256") for rel, rec in (manifest.get("shards") or {}).items()}


def _hub_location(repo: str, revision: str | None):
    """(filesystem, root path, path → data-file URL) of a Hub dataset repo; tests swap in a local directory."""
    from huggingface_hub import HfFileSystem

    root = f"datasets/{repo}" + (f"@{revision}" if revision else "")
    return HfFileSystem(), root, lambda p: f"hf://{p}"


def open_source(spec: str | os.PathLike, *, streaming: bool | None = None, revision: str | None = None) -> EvalSource:
    """Resolve a local build directory or a Hub dataset (``hf:owner/name[@revision]``, ``hf://datasets/...``)."""
    from ..engine.reader import Build
    from ..io.storage import hub_dataset

    text = str(spec)
    hub = hub_dataset(text)
    if hub is None:
        from ..io.storage import require_local

        require_local(text, "eval", " or name a Hub dataset (hf:owner/name or hf://datasets/owner/name)")
        path = Path(text).expanduser()
        build = Build.open(path)
        rels = [rel for name in build.found for rel in build.found[name]]
        if not rels:
            raise CorruptgenError(f"no data/<subset>/*.tar under {path}")
        subsets = _subsets_from_paths(rels, lambda rel: str(build.root / rel))
        src = EvalSource(text, "local", str(build.root), build.manifest or None, subsets,
                         True if streaming is None else streaming)  # fmt: skip
    else:
        src = _open_hub(text, hub[0], revision or hub[1], streaming)
    src.checksums.update(_attach_manifest(src.subsets, src.manifest))
    plan_order = [s.get("name") for s in ((src.manifest or {}).get("plan") or {}).get("subsets", [])]
    if plan_order:  # the plan's order (e.g. Syn2Nat categories) rather than alphabetical
        rank = {n: i for i, n in enumerate(plan_order)}
        src.subsets = dict(sorted(src.subsets.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    if not src.subsets:
        raise CorruptgenError(f"no data/<subset>/*.tar shards in {text}")
    if src.manifest:  # shards the manifest lists but that are not there
        missing = [rel for rel, rec in src.manifest.get("shards", {}).items()
                   if rec.get("samples") and rel.split("/")[1] in src.subsets
                   and rel not in src.subsets[rel.split("/")[1]].relpaths]  # fmt: skip
        if missing:
            raise CorruptgenError(f"{text}: shard(s) listed in manifest.json are missing: {', '.join(missing[:5])}")
    return src


def _open_hub(text: str, repo: str, revision: str | None, streaming: bool | None) -> EvalSource:
    fs, root, to_url = _hub_location(repo, revision)
    root = root.rstrip("/")
    try:
        found = sorted(fs.glob(f"{root}/data/*/*.tar"))
    except Exception as e:
        raise CorruptgenError(f"cannot list Hub dataset {repo}: {type(e).__name__}: {e}") from None
    rels = [p[len(root) + 1 :] if p.startswith(root) else p.split("/data/", 1)[-1] for p in found]
    rels = [r if r.startswith("data/") else "data/" + r for r in rels]
    manifest = None
    try:
        with fs.open(f"{root}/manifest.json", "rb") as f:
            manifest = json.loads(f.read())
    except Exception:  # a Hub repo without a corruptgen manifest is fine
        manifest = None
    subsets = _subsets_from_paths(rels, lambda rel: to_url(f"{root}/{rel}"))
    src = EvalSource(text, "hub", repo + (f"@{revision}" if revision else ""), manifest, subsets, bool(streaming))
    if not manifest:  # provenance from the Hub's LFS pointers (or the bytes of a local mirror)
        for rel in rels:
            try:
                info = fs.info(f"{root}/{rel}")
                sha = (info.get("lfs") or {}).get("sha256")
                url = to_url(f"{root}/{rel}")
                src.checksums[rel] = sha or (_sha256(url) if os.path.exists(url) else None)
            except Exception:
                src.checksums[rel] = None
    return src


def check_shards(src: EvalSource, selected: Sequence[SubsetData]) -> None:
    """Refuse, in one line, a selected local shard that is not a regular file (a FIFO would block every reader) or
    holds a member over its size cap (json: 1 MiB), from the tar headers alone: `datasets` reads members whole."""
    if src.kind != "local":
        return
    limits = Limits.of(src.manifest)
    for sd in selected:
        for rel, path in zip(sd.relpaths, sd.files, strict=True):
            try:
                bad = next(oversized(path, limits), None)
            except ShardError as e:
                raise CorruptgenError(f"{rel}: {e.reason}; eval reads no shard it cannot bound") from None
            if bad is not None:
                raise CorruptgenError(f"{rel}: sample member {bad[0]}: {bad[1]}; eval reads no member it cannot bound")


def verify_shards(src: EvalSource, selected: Sequence[SubsetData]) -> None:
    """Hash every selected local shard; compare with the manifest when there is one (clear error on mismatch)."""
    if src.kind != "local":
        return
    for sd in selected:
        for rel, path in zip(sd.relpaths, sd.files, strict=True):
            digest = _sha256(path)
            want = src.checksums.get(rel)
            if src.manifest and want is not None and digest != want:
                raise CorruptgenError(f"{rel} does not match its manifest checksum (corrupt or modified shard; "
                                      f"rebuild it, or check with `corruptgen verify {src.location}`)")  # fmt: skip
            src.checksums[rel] = digest
    src.verified = bool(src.manifest)


# ---- samples --------------------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """One evaluated sample: its frames (one for an image, T for a sequence) as encoded bytes, JSON and label."""

    subset: str
    key: str
    frames: list[bytes]
    meta: dict[str, Any]
    label: int


def peek_samples(url: str, limit: int, want: Sequence[str] = ()) -> Iterator[tuple[str, dict[str, bytes | None]]]:
    """The first ``limit`` samples of a shard as ``(key, {field: bytes if the field is in want, else None})``, read as
    a stream (a remote shard is not fetched beyond them)."""
    import fsspec

    key, fields, count = None, {}, 0
    try:
        with fsspec.open(url, "rb") as f, tarfile.open(fileobj=f, mode="r|*") as tar:
            for member in tar:
                k, _, ext = member.name.rsplit("/", 1)[-1].partition(".")
                if key is not None and k != key:
                    yield key, fields
                    count, fields = count + 1, {}
                    if count >= limit:
                        return
                key = k
                if ext in want and member.isfile() and (why := DEFAULT_LIMITS.refuse_size(ext, member.size)):
                    raise CorruptgenError(f"cannot read shard {url}: {why}")
                data = tar.extractfile(member) if ext in want and member.isfile() else None
                fields[ext] = None if data is None else data.read()
    except (OSError, tarfile.TarError, EOFError) as e:
        raise CorruptgenError(f"cannot read shard {url}: {type(e).__name__}: {e}") from None
    if key is not None:
        yield key, fields


def _peek_fields(url: str) -> list[str]:
    """Field names (extensions) of the first sample of a shard, read from the tar headers only."""
    first = next(peek_samples(url, 1), None)
    if first is None:
        raise CorruptgenError(f"shard {url} holds no samples")
    return list(first[1])


def subset_dataset(sd: SubsetData, streaming: bool):
    """The ``datasets`` object reading one subset (IterableDataset when streaming, else an Arrow-backed Dataset)."""
    import datasets
    from datasets import Features, Image, Json, List, Value, load_dataset

    fields = _peek_fields(sd.files[0])
    imgs = image_fields(fields)
    if not imgs:
        raise CorruptgenError(f"subset {sd.name}: samples have no image ({', '.join(fields)})")
    arrays = [f for f in imgs if f.rsplit(".", 1)[-1].lower() in ARRAY_EXTENSIONS]  # npy: float32 (H, W, 3)
    feats = {"__key__": Value("string"), "__url__": Value("string"),
             **{f: List(List(List(Value("float32")))) if f in arrays else Image(decode=False)
                for f in imgs}}  # fmt: skip
    if "json" in fields:
        feats["json"] = Json()
    if "cls" in fields:
        feats["cls"] = Value("int64")
    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        ds = load_dataset("webdataset", data_files={"test": list(sd.files)}, split="test", streaming=streaming,
                          features=Features(feats))  # fmt: skip
    except Exception as e:
        raise CorruptgenError(f"cannot read subset {sd.name}: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    finally:
        if was_enabled:
            datasets.enable_progress_bars()
    if arrays and not hasattr(ds, "n_shards"):  # an Arrow-backed Dataset gives nested lists unless asked for arrays
        ds = ds.with_format("numpy", columns=arrays, output_all_columns=True)
    return ds, imgs


def _rows(ds, batch: int = 32) -> Iterator[dict[str, Any]]:
    """Examples of a ``datasets`` object. ``.iter`` is used because iterating an IterableDataset inside a DataLoader
    worker would apply ``datasets``' own split by worker on top of ours."""
    for b in ds.iter(batch_size=batch):
        names = list(b)
        for values in zip(*(b[n] for n in names), strict=True):
            yield dict(zip(names, values, strict=True))


def iter_samples(sd: SubsetData, ds, imgs: Sequence[str], *, limit: int | None = None) -> Iterator[Sample]:
    """Samples of one subset (frames still encoded)."""
    for i, ex in enumerate(_rows(ds)):
        if limit is not None and i >= limit:
            return
        meta = ex.get("json") or {}
        frames = [_frame(ex.get(f)) for f in imgs]
        if any(b is None for b in frames):
            raise CorruptgenError(f"sample {ex['__key__']} of subset {sd.name} lacks an image ({', '.join(imgs)})")
        label = meta.get("label")
        if label is None:
            label = ex.get("cls")
        yield Sample(sd.name, ex["__key__"], frames, meta, -1 if label is None else int(label))


def _frame(value: Any) -> bytes | np.ndarray | None:
    """A sample's image field as read by `datasets`: an encoded image's bytes, or an ``npy`` member's array."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get("bytes")
    return np.asarray(value, dtype=np.float32)


def decode_image(data: bytes | np.ndarray, where: str = "", limits: Limits = DEFAULT_LIMITS) -> np.ndarray:
    """Encoded bytes → HxWx3 uint8 RGB (OpenCV; greyscale is expanded to 3 channels); an ``npy`` member (its bytes
    or array: float32 on [0, 1]) → HxWx3 float32 on [0, 255], the scale of uint8 pixels, without rounding (models
    normalise ``x / 255`` either way). Only once the header's pixel count is within ``limits``: an empty or oversized
    image fails in one line, before anything is allocated."""
    if is_npy(data):
        try:
            return decode_npy(data, max_pixels=limits.max_pixels) * np.float32(255)
        except BadImageError as e:
            raise CorruptgenError(f"cannot decode image {where}: {e.reason}".strip()) from None
    why = limits.refuse_pixels(data)
    if why is not None:
        raise CorruptgenError(f"cannot decode image{f' {where}' if where else ''}: {why}")
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if arr is None:
        raise CorruptgenError(f"cannot decode image {where}".strip())
    return cv2.cvtColor(arr, cv2.COLOR_BGR2RGB)


def fit_to(image: np.ndarray, size: int) -> np.ndarray:
    """Images already ``size``² pass through; others get the ImageNet eval protocol (PIL bilinear Resize(256/224 ·
    size) + CenterCrop(size)); a float image (``npy``) the same, channel by channel in PIL's float mode, unrounded."""
    if image.shape[0] == size and image.shape[1] == size:
        return image
    from ..family.preprocess import get_preprocess

    pre = get_preprocess("imagenet").scaled(size)
    if image.dtype == np.uint8:
        return pre(image)
    from PIL import Image

    from ..family.preprocess import center_crop

    height, width = pre.resized_size(*image.shape[:2])
    planes = [np.asarray(Image.fromarray(np.ascontiguousarray(image[..., c], dtype=np.float32)).resize(
        (width, height), Image.Resampling.BILINEAR)) for c in range(3)]  # fmt: skip
    return np.ascontiguousarray(center_crop(np.stack(planes, axis=-1), size, torchvision=True), dtype=np.float32)

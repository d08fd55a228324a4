"""Per-image predictions of one model on one build: the table every metric is computed from.

One row per evaluated image (one per frame for ImageNet-P sequences). Stored as Parquet (pyarrow) next to the
results file, so ``corruptgen report --recompute`` can recompute every metric without running the model again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from ..io.atomic import partial_path

TOPK = 5
FORMAT = 1
_META_KEY = b"corruptgen"


@dataclass
class Predictions:
    """Columns (all of length N):

    * ``subset``, ``key``, ``source_key``: str; ``frame``: int (0 for single images);
    * ``label``: int, ImageNet-1k index or -1 when unknown;
    * ``top5``: (N, 5) int class indices by decreasing score (-1 padded when the model has < 5 classes);
    * ``prob5``: (N, 5) float softmax probabilities of ``top5``;
    * ``delta_v``: float, the VCR visual change Δv of the image (NaN when not a VCR sample);
    * ``pred16`` / ``pred16_prob``: str or None, 16-class decisions for VCR human comparison (None when unmapped).

    ``subsets`` maps a subset name to its description (corruption, severity, category, frames, compare, stride) and
    ``meta`` holds the family, benchmark, model name and number of classes.
    """

    subset: np.ndarray
    key: np.ndarray
    source_key: np.ndarray
    frame: np.ndarray
    label: np.ndarray
    top5: np.ndarray
    prob5: np.ndarray
    delta_v: np.ndarray
    pred16: np.ndarray | None = None
    pred16_prob: np.ndarray | None = None
    subsets: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.subset)

    @property
    def top1(self) -> np.ndarray:
        return self.top5[:, 0]

    def mask(self, subset: str) -> np.ndarray:
        return self.subset == subset

    def names(self) -> list[str]:
        """Subset names in the order of ``subsets`` (then any others present)."""
        present = list(dict.fromkeys(self.subset.tolist()))
        return [s for s in self.subsets if s in present] + [s for s in present if s not in self.subsets]

    def take(self, rows: np.ndarray) -> Predictions:
        """The rows selected by a boolean mask or an index array."""
        cols = {c: getattr(self, c)[rows] for c in _COLUMNS if getattr(self, c) is not None}
        return Predictions(**cols, subsets=self.subsets, meta=self.meta)

    def sorted(self) -> Predictions:
        """Rows ordered by subset order, then key, then frame (worker order never shows in the output)."""
        order_of = {s: i for i, s in enumerate(self.names())}
        sub = np.array([order_of[s] for s in self.subset.tolist()], dtype=np.int64)
        return self.take(np.lexsort((self.frame, self.key.astype(str), sub)))

    # ---- Parquet ---------------------------------------------------------------------------------------------------

    def to_parquet(self, path: str | os.PathLike) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        n = len(self)
        arrays = {
            "subset": pa.array(self.subset.tolist(), pa.string()),
            "key": pa.array(self.key.tolist(), pa.string()),
            "source_key": pa.array(self.source_key.tolist(), pa.string()),
            "frame": pa.array(self.frame.astype(np.int32)),
            "label": pa.array(self.label.astype(np.int32)),
            "top5": pa.FixedSizeListArray.from_arrays(pa.array(self.top5.astype(np.int32).reshape(-1)), TOPK),
            "prob5": pa.FixedSizeListArray.from_arrays(pa.array(self.prob5.astype(np.float32).reshape(-1)), TOPK),
            "delta_v": pa.array(self.delta_v.astype(np.float64)),
        }
        for name in ("pred16", "pred16_prob"):
            col = getattr(self, name)
            if col is not None:
                arrays[name] = pa.array(col.tolist(), pa.string())
        table = pa.table(arrays)
        assert table.num_rows == n
        meta = {"format": FORMAT, "subsets": self.subsets, "meta": self.meta}
        table = table.replace_schema_metadata({_META_KEY: json.dumps(meta, sort_keys=True).encode()})
        tmp = partial_path(path)
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
        return path

    @classmethod
    def from_parquet(cls, path: str | os.PathLike) -> Predictions:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
            meta = json.loads((table.schema.metadata or {})[_META_KEY])
        except (OSError, KeyError, ValueError) as e:
            raise CorruptgenError(f"{path} is not a corruptgen predictions file ({type(e).__name__}: {e})") from None
        cols = {c: table.column(c).to_pylist() for c in ("subset", "key", "source_key")}

        def fixed(name: str, dtype) -> np.ndarray:
            return np.asarray(table.column(name).combine_chunks().flatten(), dtype=dtype).reshape(-1, TOPK)

        optional = {
            c: np.array(table.column(c).to_pylist(), dtype=object) for c in ("pred16", "pred16_prob")
            if c in table.column_names
        }  # fmt: skip
        return cls(
            subset=np.array(cols["subset"], dtype=object),
            key=np.array(cols["key"], dtype=object),
            source_key=np.array(cols["source_key"], dtype=object),
            frame=table.column("frame").to_numpy().astype(np.int64),
            label=table.column("label").to_numpy().astype(np.int64),
            top5=fixed("top5", np.int64),
            prob5=fixed("prob5", np.float32),
            delta_v=table.column("delta_v").to_numpy().astype(np.float64),
            **optional,
            subsets=meta.get("subsets", {}),
            meta=meta.get("meta", {}),
        )


_COLUMNS = ("subset", "key", "source_key", "frame", "label", "top5", "prob5", "delta_v", "pred16", "pred16_prob")


def build_predictions(rows: dict[str, list], subsets: dict[str, dict], meta: dict, with16: bool) -> Predictions:
    """Assemble a :class:`Predictions` from lists of per-row values (used by the runner and tests)."""
    n = len(rows["subset"])
    top5 = np.asarray(rows["top5"], dtype=np.int64).reshape(n, TOPK)
    prob5 = np.asarray(rows["prob5"], dtype=np.float32).reshape(n, TOPK)
    return Predictions(
        subset=np.array(rows["subset"], dtype=object),
        key=np.array(rows["key"], dtype=object),
        source_key=np.array(rows["source_key"], dtype=object),
        frame=np.asarray(rows["frame"], dtype=np.int64),
        label=np.asarray(rows["label"], dtype=np.int64),
        top5=top5,
        prob5=prob5,
        delta_v=np.asarray(rows.get("delta_v", [np.nan] * n), dtype=np.float64),
        pred16=np.array(rows["pred16"], dtype=object) if with16 else None,
        pred16_prob=np.array(rows["pred16_prob"], dtype=object) if with16 else None,
        subsets=subsets,
        meta=meta,
    )

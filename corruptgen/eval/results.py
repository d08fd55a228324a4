"""The results file of an evaluation: plain-JSON values, its name per model, atomic writing and reading back."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from ..io.atomic import write_atomic


def json_safe(obj: Any) -> Any:
    """Plain JSON types; NaN/inf become None."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    return obj


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


def load_results(path: str | os.PathLike) -> dict[str, Any]:
    """A corruptgen results file (clear error otherwise)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise CorruptgenError(f"cannot read results file {path}: {e}") from None
    if not isinstance(data, dict) or "corruptgen_results" not in data or "metrics" not in data:
        raise CorruptgenError(f"{path} is not a corruptgen results file")
    data["_path"] = str(path)
    return data


def write_json(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(json_safe({k: v for k, v in data.items() if not k.startswith("_")}), indent=1) + "\n"
    write_atomic(path, text.encode("utf-8"))

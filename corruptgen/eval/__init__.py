"""Evaluation of models on corruptgen builds: ``corruptgen eval``, ``corruptgen report``, ``corruptgen analyze``.

>>> from corruptgen.eval import evaluate
>>> run = evaluate("corruptgen-out/syn2nat", ["efficientnet_lite0"], out="results/syn2nat")  # doctest: +SKIP
>>> run.results[0]["metrics"]["syn2nat"]["score"]  # doctest: +SKIP

The names below are imported on first use (PEP 562), so the command line does not load torch to list its commands.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "EvalSource": "data", "open_source": "data",
    "MetricOptions": "metrics", "compute_metrics": "metrics", "detect_family": "metrics",
    "DEFAULT_MODEL": "models", "EvalModel": "models", "list_models": "models", "load_model": "models",
    "Predictions": "predictions",
    "collect": "report", "recompute": "report", "write_report": "report",
    "load_results": "results",
    "EvalRun": "runner", "evaluate": "runner",
}  # fmt: skip

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

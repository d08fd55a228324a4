"""Evaluation of models on corruptgen builds: ``corruptgen eval``, ``corruptgen report``, ``corruptgen analyze``.

>>> from corruptgen.eval import evaluate
>>> run = evaluate("corruptgen-out/syn2nat", ["efficientnet_lite0"], out="results/syn2nat")  # doctest: +SKIP
>>> run.results[0]["metrics"]["syn2nat"]["score"]  # doctest: +SKIP
"""

from .data import EvalSource, open_source
from .metrics import MetricOptions, compute_metrics, detect_family
from .models import DEFAULT_MODEL, EvalModel, list_models, load_model
from .predictions import Predictions
from .report import collect, recompute, write_report
from .results import load_results
from .runner import EvalRun, evaluate

__all__ = [
    "DEFAULT_MODEL",
    "EvalModel",
    "EvalRun",
    "EvalSource",
    "MetricOptions",
    "Predictions",
    "collect",
    "compute_metrics",
    "detect_family",
    "evaluate",
    "list_models",
    "load_model",
    "load_results",
    "open_source",
    "recompute",
    "write_report",
]

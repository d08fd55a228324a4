"""Evaluation of models on corruptgen builds: ``corruptgen eval``, ``corruptgen report``, ``corruptgen analyze``
(``vcr_similarity``: visually similar VCR corruption functions).

>>> from corruptgen.eval import evaluate
>>> run = evaluate("corruptgen-out/syn2nat", ["efficientnet_lite0"], out="results/syn2nat")  # doctest: +SKIP
>>> run.results[0]["metrics"]["syn2nat"]["score"]  # doctest: +SKIP

The names below are imported on first use (:mod:`corruptgen.lazy`), so the command line does not load torch to
list its commands.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_WHERE = {
    "EvalSource": ".data", "open_source": ".data",
    "MetricOptions": ".metrics", "compute_metrics": ".metrics", "detect_family": ".metrics",
    "DEFAULT_MODEL": "..models.loading", "EvalModel": "..models.loading", "list_models": "..models.loading",
    "load_model": "..models.loading",
    "Predictions": ".predictions",
    "collect": ".report", "recompute": ".report", "write_report": ".report",
    "load_results": ".results",
    "EvalRun": ".runner", "evaluate": ".runner",
    "vcr_similarity": ".vcr_similarity",
}  # fmt: skip

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

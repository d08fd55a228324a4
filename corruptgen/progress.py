"""Progress bars of builds and evaluations: tqdm's, or a stand-in that does nothing (tqdm then not even imported)."""

from __future__ import annotations

from typing import Any


class NoBar:
    """The progress bar of a run without one."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None, *, enabled: bool, desc: str, unit: str) -> Any:
    """A ``tqdm.auto`` bar over ``total`` items, or a :class:`NoBar` when not ``enabled``."""
    if not enabled:
        return NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True)

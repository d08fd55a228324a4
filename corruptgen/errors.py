"""User-facing errors: the CLI prints their message on one line and exits with code 2."""

from __future__ import annotations


class CorruptgenError(Exception):
    """A problem the user can fix (bad option, unknown name, wrong path); never a bug."""


class UnknownNameError(CorruptgenError, KeyError):
    """An unknown corruption, benchmark or subset name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NoSamplesError(CorruptgenError):
    """A build in which every input (or every sample) was skipped: nothing to load or evaluate."""

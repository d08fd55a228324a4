"""Local paths and URLs as a build records them: what is published (the manifest, the samples' json, the card, a
gallery, eval results) never holds an absolute local path, a home directory or a URL's credentials.

A local path is kept as written when it is relative and stays inside the folder the command ran in (``photos``,
``data/val``); one written otherwise (absolute, ``~/...``, ``../...``) is recorded relative to that folder when it lies
inside it, else as its last component (``/home/ada/data/val`` -> ``val``). A path inside the home directory is never
recorded with the home directory's own name (a command run from ``/home``). A URL keeps its protocol, host and path,
without ``user:password@``, query or fragment.
"""

from __future__ import annotations

import os
import re

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*(://|::)")
_CREDENTIALS = re.compile(r"(?<=://)[^/@?#]*@")
_MAGIC = re.compile(r"[*?\[{]")
#: an absolute path in free text (not a URL's path, not ``a/b`` inside a word); group 1: its last component
#: an absolute or ``~`` path that is one alternative of a brace pattern (``{/a/x.tar,/b/y.tar}``)
_BRACED_PATH = re.compile(r"(?<=[{,])~?/[^,{}]*")
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])~?/(?:[^\s/'\"]+/)*([^\s/'\"]+)")


def drop_credentials(text: str) -> str:
    """``text`` with the ``user[:password]@`` of every URL in it removed."""
    return _CREDENTIALS.sub("", text)


def without_credentials(url: str) -> str:
    """``url`` without ``user[:password]@`` before its host, nor query or fragment (tokens travel there)."""
    return _CREDENTIALS.sub("", re.split(r"[?#]", url, maxsplit=1)[0])


def scrub(text: str) -> str:
    """Free text (an error recorded as a skip reason) with every absolute or ``~`` path replaced by its last
    component and URLs without credentials."""
    text = re.sub(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+", lambda m: without_credentials(m.group(0)), text)
    return _ABSOLUTE.sub(lambda m: m.group(1), text)


def inside(path: str, cwd: str | None = None) -> str | None:
    """``path`` (a local path as written) relative to the current folder ``cwd`` when it lies inside it (as written
    when it already is relative and inside), else ``None``; never through the home directory's own name (the home
    directory itself is ``~``)."""
    text = os.fspath(path)
    expanded = os.path.expanduser(text)
    try:
        here = os.path.abspath(cwd or os.getcwd())
    except OSError:  # the current folder was deleted
        return None
    absolute = os.path.normpath(os.path.join(here, expanded))
    if absolute == os.path.normpath(os.path.expanduser("~")):
        return "~"  # the home directory itself: its name is the user's
    rel = os.path.relpath(absolute, here)
    if rel == ".." or rel.startswith(".." + os.sep) or _names_home(here, absolute):
        return None
    written = text.replace(os.sep, "/")
    if not text.startswith("~") and not os.path.isabs(expanded) and ".." not in written.split("/"):
        return written
    return rel.replace(os.sep, "/")


def _names_home(here: str, absolute: str) -> bool:
    """True when the path from ``here`` to ``absolute`` passes through the home directory (``here`` is above it)."""
    home = os.path.normpath(os.path.expanduser("~"))
    if not os.path.isabs(home) or home == here:
        return False
    below = lambda a, b: a == b or a.startswith(b.rstrip(os.sep) + os.sep)  # noqa: E731
    return below(home, here) and below(absolute, home)


def shown_path(path: str | os.PathLike, cwd: str | None = None) -> str:
    """A local path as a build records it (:func:`inside`, else its last component); a URL without credentials."""
    text = os.fspath(path)
    if _URL.match(text):
        return without_credentials(text)
    rel = inside(text, cwd)
    if rel is not None:
        return rel
    return os.path.basename(os.path.normpath(os.path.expanduser(text))) or "."


def shown_pattern(pattern: str, cwd: str | None = None) -> str:
    """A path pattern (brace or glob in some component) as recorded: the fixed folders before the first component
    with a pattern character as :func:`shown_path` shows a folder (left out when outside), the rest as written."""
    if _URL.match(pattern):
        return without_credentials(pattern)
    parts = pattern.replace(os.sep, "/").split("/")
    first = next((i for i, part in enumerate(parts) if _MAGIC.search(part)), None)
    if first is None:
        return shown_path(pattern, cwd)
    rest = _BRACED_PATH.sub(lambda m: shown_path(m.group(0), cwd), "/".join(parts[first:]))
    if first == 0:
        return rest
    folder = "/".join(parts[:first]) or "/"
    rel = inside(folder, cwd)
    return rest if rel is None else f"{rel}/{rest}"


_SPEC_PATH = re.compile(r"^(?P<kind>[A-Za-z][\w.+-]*):(?P<path>~?/.*)$")


def recorded_value(value: object) -> object:
    """An option's value as a plan records it: a local path in it (``/abs/m.pt``, ``~/m.pt`` or a spec such as
    ``torchscript:/abs/m.pt``) as :func:`shown_path` shows it; any other value unchanged. What the value names is
    pinned apart from its path (a model by its weights' sha256), so the plan never needs the absolute path."""
    if not isinstance(value, str) or _URL.match(value):
        return value
    match = _SPEC_PATH.match(value)
    if match is not None:
        return f"{match['kind']}:{shown_path(match['path'])}"
    if value.startswith(("/", "~/")):
        return shown_path(value)
    return value

"""``corruptgen gallery BUILD --serve``: the gallery's folder over HTTP on 127.0.0.1 until Ctrl-C.

Only requests whose ``Host:`` names this machine's loopback (``localhost``, ``127.0.0.1`` or ``[::1]``, any port) are
answered; any other (a page of another site whose name was made to point at 127.0.0.1: DNS rebinding) gets 403. A
folder is never listed: a folder's URL answers 404 (``/`` serves ``index.html``).
"""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


def local_host(header: str | None) -> bool:
    """Whether a ``Host:`` header names the loopback (``LOCAL_HOSTS``), with or without a port."""
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [::1] or [::1]:8000
        end = host.find("]")
        name, rest = host[: end + 1], host[end + 1 :]
    else:
        name, colon, port = host.partition(":")
        rest = colon + port
    return name in LOCAL_HOSTS and (rest == "" or (rest[:1] == ":" and rest[1:].isdigit()))


class _Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):
        if not local_host(self.headers.get("Host")):
            self.send_error(403, "only http://127.0.0.1, http://localhost and http://[::1] are served")
            return None
        return super().send_head()

    def list_directory(self, path):  # a folder without index.html: no listing of its files
        self.send_error(404, "no such page")
        return None

    def log_message(self, format: str, *args) -> None:  # one line per request is noise here
        pass


def make_server(folder: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of ``folder`` bound to ``127.0.0.1:<port>`` (``0``: a free port), not started."""
    handler = functools.partial(_Handler, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve(folder: Path, port: int = 0) -> int:
    """Serve ``folder`` on ``http://127.0.0.1:<port>/`` (``0``: a free port), print the URL, stop on Ctrl-C."""
    with make_server(folder, port) as server:
        print(f"serving the gallery at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0

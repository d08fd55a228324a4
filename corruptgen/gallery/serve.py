"""``corruptgen gallery BUILD --serve``: the gallery's folder over HTTP on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # one line per request is noise here
        pass


def serve(folder: Path, port: int = 0) -> int:
    """Serve ``folder`` on ``http://127.0.0.1:<port>/`` (``0``: a free port), print the URL, stop on Ctrl-C."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving the gallery at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0

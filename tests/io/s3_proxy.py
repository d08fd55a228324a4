"""A TCP proxy in front of a test server that can be made to stop answering (connections accepted, requests
swallowed) or to die (connections refused): the two ways an object store fails a build midway."""

from __future__ import annotations

import select
import socket
import threading
import time


class FaultyProxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:``target``; :meth:`hang` and :meth:`die` break it for good."""

    def __init__(self, target: int) -> None:
        self.target = ("127.0.0.1", target)
        self.mode = "forward"
        self.hang_at: bytes | None = None  # a request whose first packet holds these bytes makes it hang
        self.hung_since: float | None = None  # time.monotonic() when it stopped answering
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def hang(self) -> None:
        self.mode = "hang"
        self.hung_since = self.hung_since or time.monotonic()

    def hang_on(self, marker: bytes) -> None:
        """Stop answering at the first request that holds ``marker`` (e.g. a shard's upload, in any process)."""
        self.hang_at = marker

    def die(self) -> None:
        self.mode = "dead"
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.target)
        try:
            while self.mode != "dead":
                ready, _, _ = select.select([client, upstream], [], [], 0.1)
                for end in ready:
                    data = end.recv(1 << 16)
                    if not data:
                        return
                    if self.hang_at is not None and end is client and self.hang_at in data:
                        self.hang()
                    if self.mode == "forward":
                        (upstream if end is client else client).sendall(data)
        except OSError:
            pass
        finally:
            client.close()
            upstream.close()

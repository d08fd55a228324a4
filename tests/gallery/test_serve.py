"""``gallery --serve`` answers only requests naming the loopback in ``Host:`` (DNS rebinding gets 403) and never
lists a folder. The server runs in a thread of the test and is shut down whatever the test finds."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import corruptgen
from corruptgen.gallery.serve import local_host, make_server


@pytest.fixture
def served(icb, tmp_path) -> Iterator[tuple[Path, int]]:
    site = corruptgen.gallery(icb, tmp_path / "site", verify=False).out
    server = make_server(site)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield site, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        assert not thread.is_alive()


def _get(port: int, path: str, host: str | None) -> tuple[int, bytes]:
    """A GET with exactly the ``Host:`` header given (none at all for ``None``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_only_loopback_host_names_are_answered(served):
    site, port = served
    page = (site / "index.html").read_bytes()
    for host in ("localhost", f"localhost:{port}", "127.0.0.1", f"127.0.0.1:{port}", "[::1]", f"[::1]:{port}",
                 f"LocalHost:{port}"):  # fmt: skip
        assert _get(port, "/", host) == (200, page), host
    for host in ("evil.example", f"evil.example:{port}", f"localhost.evil.example:{port}", "127.0.0.1.nip.io",
                 f"127.0.0.2:{port}", "[::2]", f"[::1]x:{port}", f"localhost:{port}@evil.example", "localhost:x",
                 "", None):  # fmt: skip
        status, body = _get(port, "/", host)
        assert status == 403 and page not in body, host
        assert _get(port, "/gallery.json", host)[0] == 403, host


def test_no_folder_is_listed(served):
    site, port = served
    image = next((site / "images").iterdir()).name
    for path in ("/images/", "/thumbs/", "/images", "/images/../thumbs/"):
        status, body = _get(port, path, f"127.0.0.1:{port}")
        assert status in (301, 404) and image.encode() not in body and b"Directory listing" not in body, path
    assert _get(port, f"/images/{image}", "localhost")[1] == (site / "images" / image).read_bytes()


def test_a_request_without_http_1_1_host_is_refused(served):
    _, port = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert s.recv(64).startswith(b"HTTP/1.0 403")


def test_local_host_parsing():
    assert local_host("localhost") and local_host("[::1]:1") and local_host(" 127.0.0.1:80 ")
    assert not any(map(local_host, ("localhost.", "127.0.0.1:", "[::1", "::1", "0.0.0.0", "localhost:80:80")))

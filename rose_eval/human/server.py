"""The local HTTP server of ``rose-human`` (standard library, one thread per request).

It listens on 127.0.0.1 only and trusts no request by default:

- ``Host`` must name this server (``127.0.0.1:<port>`` or ``localhost:<port>``), which
  defeats DNS rebinding; an ``Origin`` or ``Sec-Fetch-Site`` header, when sent, must be
  this server's own; POSTs must carry a same-origin ``Origin`` and a JSON body.
- A random per-session token is required everywhere except the static page assets: in
  the URL of the page and of the images, in the ``X-Rose-Token`` header of API calls.
- Images are looked up by their exact URL path among the served items' images (which
  were resolved inside the release when loaded); nothing else on disk is reachable.
- Every response sets a strict Content-Security-Policy (same-origin scripts, styles,
  images and connections only), ``nosniff`` and ``no-store``.
"""

from __future__ import annotations

import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rose_eval.human.session import AnswerRejected, HumanSession

TOKEN_HEADER = "X-Rose-Token"
STATIC_TYPES = {"human.js": "text/javascript; charset=utf-8", "human.css": "text/css; charset=utf-8"}
MAX_BODY = 1 << 16
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _static(name: str) -> bytes:
    return resources.files("rose_eval.human").joinpath("static", name).read_bytes()


class HumanServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer bound to 127.0.0.1 that serves one :class:`HumanSession`."""

    daemon_threads = True

    def __init__(self, session: HumanSession, port: int = 0, token: str | None = None) -> None:
        self.session = session
        self.token = token or secrets.token_urlsafe(24)
        self.page_template = _static("index.html").decode("utf-8")
        super().__init__(("127.0.0.1", port), _Handler)
        self.port = int(self.server_address[1])
        self.origins = {f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"}
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    @property
    def url(self) -> str:
        """The address to open in a browser (it carries the session token)."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def start_background(self) -> threading.Thread:
        """Serve on a daemon thread (tests, embedding); stop with ``shutdown()``."""
        thread = threading.Thread(target=self.serve_forever, name="rose-human", daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: HumanServer
    server_version = "rose-human"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # the terminal shows progress, not an access log

    # ------------------------------------------------------------------ replies

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _refuse(self, status: int, why: str) -> None:
        self._json(status, {"error": why})

    # ------------------------------------------------------------------ checks

    def _origin_ok(self) -> bool:
        if self.headers.get("Host", "") not in self.server.hosts:
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.origins:
            return False
        return self.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")

    def _token_ok(self, query: dict[str, list[str]]) -> bool:
        given = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        return secrets.compare_digest(given.encode(), self.server.token.encode())

    # ------------------------------------------------------------------ routes

    def do_GET(self) -> None:  # noqa: N802 - http.server's API
        if not self._origin_ok():
            return self._refuse(HTTPStatus.FORBIDDEN, "request from another origin")
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path.startswith("/static/") and url.path[len("/static/"):] in STATIC_TYPES:
            name = url.path[len("/static/"):]
            return self._send(HTTPStatus.OK, _static(name), STATIC_TYPES[name])
        if not self._token_ok(query):
            return self._refuse(HTTPStatus.FORBIDDEN, "missing or wrong session token; open the URL rose-human printed")
        if url.path == "/":
            page = self.server.page_template.replace("{{TOKEN}}", self.server.token)
            return self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")
        if url.path == "/api/state":
            return self._json(HTTPStatus.OK, self.server.session.state())
        image = self.server.session.images.get(url.path)
        if image is not None:
            return self._send(HTTPStatus.OK, image.read_bytes(), "image/png")
        return self._refuse(HTTPStatus.NOT_FOUND, "not found")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - http.server's API
        if not self._origin_ok() or self.headers.get("Origin") is None:
            return self._refuse(HTTPStatus.FORBIDDEN, "request from another origin")
        url = urlsplit(self.path)
        if not self._token_ok({}):
            return self._refuse(HTTPStatus.FORBIDDEN, "missing or wrong session token")
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            return self._refuse(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        try:
            payload = json.loads(self.rfile.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._refuse(HTTPStatus.BAD_REQUEST, "body is not JSON")
        if not isinstance(payload, dict):
            return self._refuse(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
        session = self.server.session
        try:
            if url.path == "/api/submit":
                session.submit(payload)
            elif url.path == "/api/skip":
                session.skip(payload)
            else:
                return self._refuse(HTTPStatus.NOT_FOUND, "not found")
        except AnswerRejected as exc:
            return self._json(exc.status, {"error": str(exc), "state": session.state()})
        return self._json(HTTPStatus.OK, session.state())

"""Fixtures for the runner tests: a tiny synthetic release and a real local HTTP server.

The release is rendered here (DejaVu letters on white, no borders, near-identical
cells) with rows carrying the fields rose-run reads. The server is a small
OpenAI-compatible ``/v1/chat/completions`` endpoint on 127.0.0.1 with scripted replies.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

PROMPT_GLOBAL = (
    "You are given a grid image. Rows are counted from top to bottom, and columns from left to right, "
    "both starting from 1. Output only the formal answer in the required format. Do not output any "
    "explanation.\n\nAllowed answer formats:\n1) COUNT(n)\n2) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE\n"
    "3) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; SUBMIT(n)\n\nExamples:\nCOUNT(3)\nCLICK(R2,C5); CLICK(R4,C7); DONE\n"
    "CLICK(R2,C5); CLICK(R4,C7); SUBMIT(2)\n"
)
CUE_COLOR = (230, 0, 0)


# ---------------------------------------------------------------------------- scenes


def letter_tile(char: str, cell: int, color: tuple[int, int, int] = (20, 20, 20)) -> Image.Image:
    tile = Image.new("RGB", (cell, cell), (255, 255, 255))
    font = ImageFont.truetype(str(FONT), int(cell * 0.72))
    ImageDraw.Draw(tile).text((cell / 2, cell / 2), char, font=font, fill=color, anchor="mm")
    return tile


def shape_tile(cell: int, color: tuple[int, int, int], notch: bool) -> Image.Image:
    """A coloured disc; the exception has a small square notch (a local edit)."""
    tile = Image.new("RGB", (cell, cell), (250, 246, 235))
    draw = ImageDraw.Draw(tile)
    m = cell // 6
    draw.ellipse([m, m, cell - m, cell - m], fill=color)
    if notch:
        s = max(3, cell // 8)
        draw.rectangle([cell // 2 - s, cell // 2 - s, cell // 2 + s, cell // 2 + s], fill=(250, 246, 235))
    return tile


def compose(majority: Image.Image, target: Image.Image, rows: int, cols: int,
            targets: set[tuple[int, int]]) -> Image.Image:
    cell = majority.width
    image = Image.new("RGB", (cols * cell, rows * cell))
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            image.paste(target if (r, c) in targets else majority, ((c - 1) * cell, (r - 1) * cell))
    return image


def outline(image: Image.Image, cell: int, rect: tuple[int, int, int, int],
            color: tuple[int, int, int] = CUE_COLOR) -> Image.Image:
    """The generator's OUTLINE_BOX style: a frame inside the rectangle's outer edge."""
    r1, r2, c1, c2 = rect
    width = max(2, round(cell * 0.06))
    out = image.copy()
    ImageDraw.Draw(out).rectangle([(c1 - 1) * cell, (r1 - 1) * cell, c2 * cell - 1, r2 * cell - 1],
                                  outline=color, width=width)
    return out


def tint(image: Image.Image, cell: int, rect: tuple[int, int, int, int], alpha: float = 0.35,
         color: tuple[int, int, int] = CUE_COLOR) -> Image.Image:
    """The generator's MASK style: the rectangle blended toward the cue colour."""
    r1, r2, c1, c2 = rect
    arr = np.asarray(image, dtype=np.float32).copy()
    box = (slice((r1 - 1) * cell, r2 * cell), slice((c1 - 1) * cell, c2 * cell))
    arr[box] = arr[box] * (1 - alpha) + np.asarray(color, dtype=np.float32) * alpha
    return Image.fromarray(np.rint(arr).astype(np.uint8))


def degrade(image: Image.Image) -> Image.Image:
    """JPEG quality 80 after a slight blur, same size (the issue's degraded copy)."""
    buffer = io.BytesIO()
    image.filter(ImageFilter.GaussianBlur(0.7)).save(buffer, format="JPEG", quality=80)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def random_targets(rng: np.random.Generator, rows: int, cols: int, k: int) -> set[tuple[int, int]]:
    flat = rng.choice(rows * cols, size=k, replace=False)
    return {(int(i) // cols + 1, int(i) % cols + 1) for i in flat}


# ---------------------------------------------------------------------------- release


def _labels(cells: list[tuple[int, int]]) -> str:
    return "".join(f"CLICK(R{r},C{c}); " for r, c in sorted(cells))


def scene_rows(subset: str, prefix: str, k: int, rows: int, cols: int, targets: set[tuple[int, int]],
               base: str, cue: str, t3: tuple[int, int], t4: tuple[int, int, int, int],
               t5_cols: tuple[int, int]) -> list[dict[str, Any]]:
    """Five task rows of one scene, worded as the generator words them."""
    in_rows = sorted((r, c) for r, c in targets if t3[0] <= r <= t3[1])
    r1, r2, c1, c2 = t4
    in_rect = sorted((r, c) for r, c in targets if r1 <= r <= r2 and c1 <= c <= c2)
    kept = sorted((r, c) for r, c in targets if not t5_cols[0] <= c <= t5_cols[1])
    rows_phrase = f"in rows {t3[0]} to {t3[1]}" if t3[0] != t3[1] else f"in row {t3[0]}"
    cols_phrase = f"columns {t5_cols[0]} to {t5_cols[1]}" if t5_cols[0] != t5_cols[1] else f"column {t5_cols[0]}"
    tasks = [
        ("T1_COUNT_GLOBAL", "COUNT", "GLOBAL", {}, base,
         "Count the number of cells that are different from the majority in the whole grid. "
         "Answer only in the format: COUNT(n).", f"COUNT({len(targets)})"),
        ("T2_COUNT_LOCAL_NUMERIC", "COUNT", "ROW_RANGE", {"r1": t3[0], "r2": t3[1]}, base,
         f"Count the number of cells that are different from the majority {rows_phrase}. "
         "Answer only in the format: COUNT(n).", f"COUNT({len(in_rows)})"),
        ("T3_CLICK_LOCAL_NUMERIC", "CLICK", "ROW_RANGE", {"r1": t3[0], "r2": t3[1]}, base,
         f"Click all cells that are different from the majority {rows_phrase}. "
         "Answer only using CLICK(Rr,Cc); ...; DONE.", _labels(in_rows) + "DONE"),
        ("T4_CLICK_VISUAL_REGION", "CLICK", "VISUAL_REGION", {"r1": r1, "r2": r2, "c1": c1, "c2": c2}, cue,
         "Click all cells that are different from the majority inside the highlighted region. "
         "Answer only using CLICK(Rr,Cc); ...; DONE.", _labels(in_rect) + "DONE"),
        ("T5_CLICK_COUNT_EXCLUSION", "CLICK_COUNT", "EXCLUSION",
         {"exclude_type": "COL_RANGE", "exclude_params": {"c1": t5_cols[0], "c2": t5_cols[1]}}, base,
         f"Click all cells that are different from the majority, excluding {cols_phrase}, then submit the "
         "number of cells you clicked. Answer only using CLICK(Rr,Cc); ...; SUBMIT(n).",
         _labels(kept) + f"SUBMIT({len(kept)})"),
    ]
    out = []
    for t, (template, mode, region_type, params, image, local, answer) in enumerate(tasks, start=1):
        out.append({
            "item_id": f"{prefix}ITEM_{5 * k - 5 + t:06d}", "scene_id": f"{prefix}SCENE_{k:06d}",
            "rose_subset": subset, "task_template": template, "task_mode": mode,
            "region_type": region_type, "region_params": params, "image": image,
            "prompt_global": PROMPT_GLOBAL, "prompt_local": local, "prompt": PROMPT_GLOBAL + "\n" + local,
            "answer": answer, "rows": rows, "cols": cols,
        })
    return out


@dataclass
class Release:
    root: Path
    rows: list[dict[str, Any]]


def write_release(root: Path, seed: int = 0, scenes_per_subset: int = 2,
                  subsets: tuple[tuple[str, str], ...] = (("ROSE-ChineseGlyph", "CH"), ("ROSE-PixelEdit", "PEDIT")),
                  degraded: bool = False) -> Release:
    """A small release folder: letters for the first subset, notched discs for the second."""
    rng = np.random.default_rng(seed)
    all_rows: list[dict[str, Any]] = []
    for s_index, (subset, prefix) in enumerate(subsets):
        folder = root / "images" / subset
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(1, scenes_per_subset + 1):
            rows, cols = int(rng.integers(6, 11)), int(rng.integers(6, 11))
            cell = int(rng.integers(30, 56))
            if s_index % 2 == 0:
                pair = [("O", "Q"), ("E", "F"), ("P", "R")][k % 3]
                majority, target = letter_tile(pair[0], cell), letter_tile(pair[1], cell)
            else:
                color = tuple(int(x) for x in rng.integers(40, 200, size=3))
                majority, target = shape_tile(cell, color, False), shape_tile(cell, color, True)
            targets = random_targets(rng, rows, cols, int(rng.integers(1, 5)))
            base = compose(majority, target, rows, cols, targets)
            r1 = int(rng.integers(1, rows - 1))
            c1 = int(rng.integers(1, cols - 1))
            rect = (r1, min(rows, r1 + 2), c1, min(cols, c1 + 3))
            cue = outline(base, cell, rect)
            if degraded:
                base, cue = degrade(base), degrade(cue)
            base_rel = f"images/{subset}/{prefix}IMG_{2 * k - 1:06d}.png"
            cue_rel = f"images/{subset}/{prefix}IMG_{2 * k:06d}.png"
            base.save(root / base_rel, compress_level=1)  # pixels are what counts; level 1 is ~10x faster
            cue.save(root / cue_rel, compress_level=1)
            t3_start = int(rng.integers(1, rows))
            all_rows += scene_rows(subset, prefix, k, rows, cols, targets, base_rel, cue_rel,
                                   (t3_start, min(rows, t3_start + 1)), rect, (1, 2))
    (root / "metadata_test.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in all_rows), encoding="utf-8")
    return Release(root=root, rows=all_rows)


@pytest.fixture
def release(tmp_path: Path) -> Release:
    return write_release(tmp_path / "release")


# ---------------------------------------------------------------------------- server

Reply = tuple[int, dict[str, str], Any, float]  # status, headers, JSON body (or bytes), delay seconds


def ok_reply(text: str, finish_reason: str = "stop") -> Reply:
    body = {"id": "x", "object": "chat.completion", "created": 1700000000, "model": "rose-test", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
    return 200, {}, body, 0.0


@dataclass
class ChatServer:
    """A real HTTP/1.1 keep-alive server with a scripted reply function, a request log
    (bodies, headers, arrival and reply times), the TCP connections it accepted and the
    most requests it had in flight at once."""

    script: Callable[[int, dict[str, Any], dict[str, str]], Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)
    replied: list[tuple[float, int]] = field(default_factory=list)  # (monotonic time, status)
    in_flight_at: list[int] = field(default_factory=list)  # requests in flight as each arrived (itself included)
    oldest_in_flight_at: list[float] = field(default_factory=list)  # arrival of the oldest of those
    open_arrivals: dict[int, float] = field(default_factory=dict)  # request index -> arrival, while in flight
    connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)


def start_chat_server(script: Callable[[int, dict[str, Any], dict[str, str]], Reply]
                      ) -> tuple[ChatServer, ThreadingHTTPServer]:
    """Serve ``script`` on 127.0.0.1 in a daemon thread; shut the server down when done."""
    state = ChatServer(script=script)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints serve

        def setup(self) -> None:
            super().setup()
            with state.lock:
                state.connections += 1

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            headers = {k.lower(): v for k, v in self.headers.items()}
            with state.lock:
                index = len(state.requests)
                state.requests.append(body)
                state.headers.append(headers)
                state.arrived.append(time.monotonic())
                state.open_arrivals[index] = state.arrived[-1]
                state.oldest_in_flight_at.append(min(state.open_arrivals.values()))
                state.in_flight += 1
                state.in_flight_at.append(state.in_flight)
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                self._reply(index, body, headers)
            finally:
                with state.lock:
                    state.in_flight -= 1
                    state.open_arrivals.pop(index, None)

        def _reply(self, index: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            if self.path != "/v1/chat/completions":
                status, extra, reply, delay = 404, {}, {"error": "not found"}, 0.0
            else:
                status, extra, reply, delay = state.script(index, body, headers)
            if delay:
                time.sleep(delay)
            payload = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
            with state.lock:
                state.replied.append((time.monotonic(), status))
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return state, server


def stop_chat_server(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


@contextmanager
def chat_servers() -> Iterator[Callable[[Callable[[int, dict[str, Any], dict[str, str]], Reply]], ChatServer]]:
    """``start(script)`` starts a server; every one started is shut down on exit."""
    started: list[ThreadingHTTPServer] = []

    def start(script: Callable[[int, dict[str, Any], dict[str, str]], Reply]) -> ChatServer:
        state, server = start_chat_server(script)
        started.append(server)
        return state

    try:
        yield start
    finally:
        for server in started:
            stop_chat_server(server)


@pytest.fixture
def chat_server():
    """Start servers on demand: ``srv = chat_server(script)``; all are shut down after the test."""
    with chat_servers() as start:
        yield start

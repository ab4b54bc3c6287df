"""Remake the README screenshots of ``rose-gen preview`` and ``rose-human`` (headless Chromium).

    .venv/bin/python scripts/screenshot_preview_human.py RELEASE OUT_DIR   # e.g. out/mini docs/screenshots

RELEASE is a generated release (``rose-gen profile=mini output_dir=out/mini``). The PNGs are
reduced to a 256-colour palette so each stays well under 200 KB.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rose_eval.human.server import HumanServer  # noqa: E402
from rose_eval.human.session import HumanSession  # noqa: E402
from rose_eval.runners.dataset import Selection, load_split  # noqa: E402
from rose_gen.check.preview.build import build_preview  # noqa: E402
from tests.browser import launch_chromium  # noqa: E402


def save_small(raw: bytes, path: Path) -> None:
    """A screenshot as a palette PNG (deterministic quantiser, no dithering)."""
    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        Path(tmp.name).write_bytes(raw)
        with Image.open(tmp.name) as im:
            small = im.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            small.save(path, optimize=True)
    print(f"{path}: {path.stat().st_size / 1024:.0f} KB")


def preview_shot(browser, release: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = build_preview(release, Path(tmp) / "preview", per_subset=3)
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(result.index.as_uri())
        page.locator("h2").first.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -8)")
        save_small(page.screenshot(), out / "rose-gen-preview.png")
        page.close()


def human_shot(browser, release: Path, out: Path) -> None:
    items = load_split(release, "test", Selection(subsets=("ChineseGlyph",), templates=("T4",))).items
    item = items[0]
    with tempfile.TemporaryDirectory() as tmp:
        session = HumanSession([item], Path(tmp) / "human.jsonl", "human:demo")
        server = HumanServer(session, 0)
        server.start_background()
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1070})
            page.goto(server.url)
            page.wait_for_selector('#task[data-ready="true"]')
            page.keyboard.press("f")
            box = page.locator("#grid-image").bounding_box()
            rows, cols = item.row["rows"], item.row["cols"]
            for label in item.row["ground_truth_clicks"][:1]:
                r, c = (int(v[1:]) for v in label.split(","))
                page.locator("#grid-image").click(position={"x": (c - 0.5) * box["width"] / cols,
                                                            "y": (r - 0.5) * box["height"] / rows})
            page.locator("#grid-image").hover(position={"x": box["width"] * 0.55, "y": box["height"] * 0.4})
            save_small(page.screenshot(), out / "rose-human.png")
            page.close()
        finally:
            server.shutdown()
            server.server_close()
            session.close()
    print(json.dumps({"item": item.item_id}))


def main() -> None:
    release, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        preview_shot(browser, release, out)
        human_shot(browser, release, out)
        browser.close()


if __name__ == "__main__":
    main()

"""Make the README's screenshots of `rose-eval report` (docs/screenshots/report-*.png).

    .venv/bin/python scripts/screenshot_report.py [--out docs/screenshots] [--keep DIR]

Generates the mini release, answers it with the oracle, cv and random baselines, evaluates
each run, writes the report and photographs two parts of it in headless Chromium (the
same launch as the tests, tests/browser.py): the top (finding, Table 1, Table 2, the
perception-to-action plot) and the first gallery cards. Screenshots are shrunk and
reduced to a 256-colour palette to stay small.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import launch_chromium  # noqa: E402

BIN = Path(sys.executable).parent
SCALE = 0.7


def run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def build_report(work: Path) -> Path:
    release = work / "mini"
    run(str(BIN / "rose-gen"), "profile=mini", f"output_dir={release}", "workers=2",
        "overwrite=true", "progress=false")
    eval_dirs = []
    for solver in ("oracle", "cv", "random"):
        preds = work / f"{solver}.jsonl"
        run(str(BIN / "rose-run"), "--dataset_root", str(release), "--split", "test", "--solver",
            solver, "--model", f"{solver}-baseline", "--output", str(preds))
        eval_dirs.append(work / f"eval_{solver}")
        run(str(BIN / "rose-eval"), "--dataset_root", str(release), "--predictions", str(preds),
            "--out_dir", str(eval_dirs[-1]))
    report = work / "report.html"
    run(str(BIN / "rose-eval"), "report", *map(str, eval_dirs), "--out", str(report),
        "--dataset_root", str(release), "--gallery", "6")
    return report


def shrink(path: Path) -> None:
    image = Image.open(path).convert("RGB")
    image = image.resize((round(image.width * SCALE), round(image.height * SCALE)),
                         Image.Resampling.LANCZOS)
    image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        path, optimize=True)


def photograph(report: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(report.as_uri())
        bottom = page.locator("#gap").bounding_box()
        page.screenshot(path=out / "report-top.png", full_page=True,
                        clip={"x": 0, "y": 0, "width": 1280,
                              "height": bottom["y"] + bottom["height"] + 16})
        cards = page.locator("#gallery .gallery").first.bounding_box()
        page.screenshot(path=out / "report-gallery.png", full_page=True,
                        clip={"x": 0, "y": cards["y"] - 60, "width": 1280, "height": 760})
        browser.close()
    for name in ("report-top.png", "report-gallery.png"):
        shrink(out / name)
        print(f"{out / name}: {(out / name).stat().st_size / 1024:.0f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep the files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rose_report_shot_") as tmp:
        work = args.keep or Path(tmp)
        photograph(build_report(work), args.out)


if __name__ == "__main__":
    main()

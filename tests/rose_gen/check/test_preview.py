"""rose-gen preview: a sheet per subset that marks exactly the exception cells, magnified tiles that
are the release's own pixels, same bytes every time, and an index whose links resolve."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_eval.vocab import SUBSET_ORDER
from rose_gen.check.preview.build import INDEX_FILE, build_preview
from rose_gen.check.preview.sheet import MARK_RGB
from rose_gen.cli.gen import main as rose_gen_main
from tests.browser import PageWatch


@pytest.fixture(scope="module")
def preview(mini_release, tmp_path_factory):
    return build_preview(mini_release, tmp_path_factory.mktemp("preview") / "p", per_subset=2)


def _t1_rows(root: Path) -> dict[str, dict]:
    rows = [json.loads(line) for split in ("dev", "test")
            for line in (root / f"metadata_{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["scene_id"]: r for r in rows if r["task_template"] == "T1_COUNT_GLOBAL"}


def _border(sheet: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = box
    ring = [sheet[y0 + 1, x0 + 1:x1], sheet[y1 - 1, x0 + 1:x1], sheet[y0 + 1:y1, x0 + 1], sheet[y0 + 1:y1, x1 - 1]]
    return np.concatenate(ring)


def test_one_sheet_per_subset_and_the_index_links_resolve(preview) -> None:
    assert [s.subset for s in preview.sheets] == list(SUBSET_ORDER)
    html = preview.index.read_text(encoding="utf-8")
    links = set(re.findall(r'(?:href|src)="([^"#][^"]*)"', html))
    assert links == {s.file for s in preview.sheets}
    for link in links:
        assert not re.match(r"^[a-z]+:|^/", link)  # relative, no scheme, no absolute path
        with Image.open(preview.out / link) as im:
            assert im.format == "PNG" and im.width > 1000
    assert "<script" not in html and "http" not in html
    for sheet in preview.sheets:
        assert len(sheet.bands) == 2 and sheet.scenes_total == 3
        assert f'id="{sheet.subset}"' in html and sheet.bands[0].scene.scene_id in html


def test_marks_frame_exactly_the_exception_cells(preview, mini_release) -> None:
    rows = _t1_rows(mini_release)
    for sheet in preview.sheets:
        pixels = np.asarray(Image.open(preview.out / sheet.file).convert("RGB"))
        for band in sheet.bands:
            row = rows[band.scene.scene_id]  # the release's rows, not the preview's reading of them
            targets = {(r, c) for r, c in row["target_cells"]}
            cell = row["cell_size"] * band.scale
            for r in range(1, row["rows"] + 1):
                for c in range(1, row["cols"] + 1):
                    box = (band.base.x + round((c - 1) * cell), band.base.y + round((r - 1) * cell),
                           band.base.x + round(c * cell) - 1, band.base.y + round(r * cell) - 1)
                    magenta = np.all(_border(pixels, box) == MARK_RGB, axis=-1).mean()
                    if (r, c) in targets:
                        assert magenta == 1.0, (band.scene.scene_id, r, c)
                    else:
                        assert magenta == 0, (band.scene.scene_id, r, c)


def test_tiles_are_the_release_pixels_magnified(preview, mini_release) -> None:
    rows = _t1_rows(mini_release)
    for sheet in preview.sheets:
        pixels = np.asarray(Image.open(preview.out / sheet.file).convert("RGB"))
        for band in sheet.bands:
            row = rows[band.scene.scene_id]
            base = np.asarray(Image.open(mini_release / row["image"]).convert("RGB"))
            size = row["cell_size"]
            targets = {tuple(t) for t in row["target_cells"]}
            kinds = [cell in targets for cell in band.tile_cells]
            assert kinds[0] is False and all(kinds[1:]) and len(kinds) >= 2
            for (r, c), box in zip(band.tile_cells, band.tiles, strict=True):
                zoom = box.w // size
                assert zoom == (4 if size <= 64 else 2) and box.w == zoom * size
                crop = base[(r - 1) * size:r * size, (c - 1) * size:c * size]
                shown = pixels[box.y:box.y + box.h, box.x:box.x + box.w]
                assert np.array_equal(shown, crop.repeat(zoom, axis=0).repeat(zoom, axis=1))


def test_same_release_same_bytes(preview, mini_release, tmp_path) -> None:
    again = build_preview(mini_release, tmp_path / "again", per_subset=2)
    names = sorted(p.name for p in preview.out.iterdir())
    assert names == sorted(p.name for p in again.out.iterdir()) == sorted([INDEX_FILE, *(s.file for s in preview.sheets)])
    for name in names:
        assert (preview.out / name).read_bytes() == (again.out / name).read_bytes(), name


def test_the_index_loads_clean_in_a_browser(preview, watched_page: PageWatch) -> None:
    page = watched_page.page
    page.goto(preview.index.as_uri())
    page.wait_for_load_state("load")
    for img in page.locator("img").all():
        img.scroll_into_view_if_needed()
    widths = page.locator("img").evaluate_all("els => els.map(e => e.complete ? e.naturalWidth : -1)")
    assert len(widths) == 5 and all(w > 1000 for w in widths)
    assert page.locator("h2").all_inner_texts() == list(SUBSET_ORDER)
    assert watched_page.problems == []


def _run(argv: list[str]) -> int:
    try:
        return rose_gen_main(argv)
    except SystemExit as exc:  # argparse's own errors (one line: see the parser's error())
        return int(exc.code)


def test_cli_dispatch_and_bad_input(mini_release, tmp_path, capsys) -> None:
    out = tmp_path / "cli"
    assert rose_gen_main(["preview", str(mini_release), "--out", str(out), "--per_subset", "1"]) == 0
    assert len(list(out.glob("*.png"))) == 5 and (out / INDEX_FILE).is_file()
    capsys.readouterr()
    bad = [
        (["preview", str(tmp_path / "missing")], "is not a directory"),
        (["preview", str(mini_release), "--per_subset", "0", "--out", str(tmp_path / "zero")], "--per_subset"),
        (["preview", str(mini_release), "--out", str(mini_release / "inside")], "inside the release"),
        (["preview", str(mini_release), "--per_subset", "x"], "invalid int value"),
        (["preview", str(tmp_path)], "no metadata"),
    ]
    for argv, what in bad:
        assert _run(argv) == 2
        err = capsys.readouterr().err
        assert what in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "zero").exists() and not (mini_release / "inside").exists()


def test_a_release_with_a_broken_image_is_one_line(mini_release, tmp_path, capsys) -> None:
    copy = tmp_path / "release"
    shutil.copytree(mini_release, copy)
    victim = next((copy / "images").rglob("*.png"))
    victim.write_bytes(b"not a png")
    assert _run(["preview", str(copy), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "cannot read the image" in err and victim.name in err and len(err.strip().splitlines()) == 1

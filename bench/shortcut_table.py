"""The "what each subset tests" table: rose-audit's shortcut figures per subset and preset, before -> after.

Reads ``<dir>/<preset>.audit.json`` (written by ``rose-audit <release> --out ...``) from a
"before" and an "after" folder and prints one Markdown table: a row per subset and preset,
each cell ``before → after``. Make the audits with

    rose-gen profile=v0_1 difficulty=<preset> output_dir=DIR/<preset> workers=2
    rose-audit DIR/<preset> --out DIR/<preset>.audit.json

    .venv/bin/python bench/shortcut_table.py --before /tmp/i10e/before --after /tmp/i10e/after --markdown

``--markdown`` writes the table as the record ``bench/shortcuts.md`` (docs/validity.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag  # noqa: E402 - the bench folder is not a package

PRESETS = ("easy", "standard", "hard", "extreme")
SHORT = {"ROSE-ChineseGlyph": "Glyph", "ROSE-EmojiStyle": "EmojiStyle", "ROSE-EmojiContent": "EmojiContent",
         "ROSE-PixelEdit": "PixelEdit", "ROSE-PixelContent": "PixelContent"}
# (column head, figure key of rose_gen.assets.shortcuts.summarise, shown as a percentage)
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("cells changed (median)", "changed_share_median", True),
    ("pops out", "pop_out", True),
    ("art size off > 5 %", "art_area_off_5pct", True),
    ("mostly off-palette", "mostly_off_palette", True),
    ("colour-only scenes", "colour_only_scenes", True),
    ("composite scenes", "composite_scenes", True),
    ("mean L* shift > 5", "brightness_cue", True),
)


def load(folder: Path | None, preset: str) -> dict | None:
    """The audit record of one preset, or None when the folder has none."""
    if folder is None:
        return None
    path = folder / f"{preset}.audit.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def fmt(value: float | None, percent: bool) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f} %" if percent else f"{value:.2f}"


def cell(before: dict | None, after: dict | None, key: str, percent: bool) -> str:
    b = fmt(before.get(key), percent) if before else "–"
    a = fmt(after.get(key), percent) if after else "–"
    return f"{b} → {a}" if before and after else (a if after else b)


def invisible(record: dict | None, subset: str) -> str:
    if not record or subset not in record["subsets"]:
        return "–"
    s = record["subsets"][subset]
    return f"{s['flagged']}/{s['exceptions']}"


def position(record: dict | None, subset: str) -> str:
    if not record or subset not in record["subsets"]:
        return "–"
    pos = record["subsets"][subset]["position"]
    return f"{100 * pos['border_share']:.0f}/{100 * pos['border_expected']:.0f} %"


def table(before: Path | None, after: Path | None) -> str:
    """The Markdown table (a row per subset and preset)."""
    heads = ["subset", "preset", *(c[0] for c in COLUMNS), "invisible", "on border (seen/expected)"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * 2 + "---:|" * (len(heads) - 2)]
    records = {p: (load(before, p), load(after, p)) for p in PRESETS}
    for subset, short in SHORT.items():
        for preset in PRESETS:
            rb, ra = records[preset]
            fb = rb["subsets"][subset]["shortcuts"] if rb and subset in rb["subsets"] else None
            fa = ra["subsets"][subset]["shortcuts"] if ra and subset in ra["subsets"] else None
            if fb is None and fa is None:
                continue
            cells = [cell(fb, fa, key, pct) for _, key, pct in COLUMNS]
            inv = f"{invisible(rb, subset)} → {invisible(ra, subset)}" if rb and ra else invisible(ra or rb, subset)
            pos = f"{position(rb, subset)} → {position(ra, subset)}" if rb and ra else position(ra or rb, subset)
            lines.append(f"| {short} | {preset} | " + " | ".join(cells) + f" | {inv} | {pos} |")
    return "\n".join(lines)


TITLE = "What each subset tests: rose-audit's shortcut figures"
INTRO = ("`rose-audit` on full `v0_1` releases (1,512 scenes each, seed 0), per subset and preset; a cell reads "
         "*before → after* when both audit folders hold the preset (before and after issue 10's stimulus work), "
         "else the one figure there is. Made by `.venv/bin/python bench/shortcut_table.py --before DIR --after DIR "
         "--markdown` from `rose-audit RELEASE --out DIR/<preset>.audit.json`.")


def record(before: Path | None, after: Path | None) -> str:
    """The record's text: title, what it is, the table."""
    return f"# {TITLE}\n\n{INTRO}\n\n{table(before, after)}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, help="folder of <preset>.audit.json before the change")
    parser.add_argument("--after", type=Path, default=None, help="folder of <preset>.audit.json after the change")
    add_markdown_flag(parser, "shortcuts.md")
    args = parser.parse_args(argv)
    if args.before is None and args.after is None:
        parser.error("give --before and/or --after")
    text = record(args.before, args.after)
    print(text, end="")
    if args.markdown:
        tmp = args.markdown.with_suffix(".md.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(args.markdown)
        print(f"recorded {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

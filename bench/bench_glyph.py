"""Time the glyph source: pool (checksums + manifest), tile rendering (uncached and cached).

    .venv/bin/python bench/bench_glyph.py [--tiles 400]

Tiles are drawn for distinct pool entries (so distinct faces and characters) at the
smallest, a middle and the largest v0.1 cell size.

Recorded (2-core Debian 12, Pillow 13.0, FreeType 2.14.3): pool 1,000 pairs, first call
0.4 s, again 0.05 s; tiles 0.20 / 0.27 / 0.40 ms uncached at 42 / 90 / 156 px, 0.01-0.03 ms
cached.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rose_gen.sources.glyph import SOURCE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

SIZES = (42, 90, 156)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, default=400)
    add_markdown_flag(parser, "glyph.md")
    args = parser.parse_args()
    context = run_context()
    t0 = time.perf_counter()
    pool = SOURCE.pool({})
    t1 = time.perf_counter()
    SOURCE.pool({})
    t2 = time.perf_counter()
    print(f"pool: {len(pool)} pairs; first call {t1 - t0:.2f} s (font checksums), again {t2 - t1:.2f} s")
    entries = pool[: args.tiles]
    for size in SIZES:
        start = time.perf_counter()
        for p in entries:
            SOURCE.render_tile(p, "majority", size)
        cold = (time.perf_counter() - start) / len(entries) * 1000
        start = time.perf_counter()
        for p in entries:
            SOURCE.render_tile(p, "majority", size)
        warm = (time.perf_counter() - start) / len(entries) * 1000
        print(f"tile {size:>3} px: {cold:.2f} ms uncached, {warm:.3f} ms cached")
        if args.markdown:
            intro = ("The glyph source: building its pool (font checksums and manifest) once and again, "
                     "then drawing tiles of distinct pool entries at the smallest, a middle and the largest "
                     "v0.1 cell size, uncached and cached (ms per tile). Reproduce: "
                     "`.venv/bin/python bench/bench_glyph.py --markdown`.")
            write_row(args.markdown, "Glyph tiles", intro,
                      ["pool pairs", "pool first / again s", "tiles", "uncached ms", "cached ms"],
                      f"{size} px cells", [f"{len(pool):,}", f"{t1 - t0:.2f} / {t2 - t1:.2f}", str(len(entries)),
                                           f"{cold:.2f}", f"{warm:.3f}"], context)


if __name__ == "__main__":
    main()

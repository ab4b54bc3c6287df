"""PNG settings for release images: encode time vs size, by Pillow's zlib level and strategy.

Usage: .venv/bin/python bench/bench_png.py RELEASE_DIR [--per-subset 20] [--repeat 3] [--writers]

``--writers`` compares the release PNG writers instead (issue 27): Pillow at level 1 (the
comparator), each registered writer of ``rose_gen/render/png.py`` and libpng with each
fixed row filter, CPU seconds and bytes relative to Pillow, every output decoded back and
compared with the input pixels.

Recorded with ``--writers`` (v0_1 release, 300 images, best of 2, 2026-12-03, machine shared):

    writer                 time vs pillow  size vs pillow
    pillow (level 1)            1.00           1.00
    libpng, adaptive            1.14           1.01
    libpng, filter none         0.33           1.25
    libpng, filter sub          0.33           1.23
    libpng, filter up           0.32-0.34      1.05   <- render.png_encoder=libpng-up
    libspng                     1.92           1.01
    numpy Up + stdlib zlib      0.37           1.05   (bytes depend on the system zlib)
    numpy Up + zlib-ng          0.12           1.39   (level 1: over the 1.3x size bound)

Then (2026-12-07, 100 images, ``--writers``, bench/png_writers.md): zlib-ng at level 2
(``deflate_fast``) 0.17x Pillow's CPU at 0.76x its bytes: ``render.png_encoder=zlibng-up``
with ``render.png_compress_level=2``, the default since.

Grid images repeat down the columns, so the Up filter leaves rows of near zeros that zlib
packs at level 1; libpng with one fixed filter skips the per-row trial that is most of
Pillow's time. imagecodecs bundles its libpng and zlib, so the bytes are the same on
every machine for the pinned version.

Takes the first ``per-subset`` base and cue images of every subset of a release, decodes
them (untimed) and encodes each with every setting; reports CPU seconds (best of
``repeat``) and total bytes per setting, relative to the release's setting (level 1,
default strategy). Changing the setting changes the PNG bytes of every image (and so every
release hash): a new setting is a recorded, deliberate change.

Recorded (v0_1 release, first 20 images of each subset = 100 images, best of 3; 2-core VM
shared with other jobs, load average ~9; CPU time, so the ratios hold better than wall time):

    level  strategy        CPU s    MB   time vs l1  size vs l1
    0      default          1.71  381.2    0.92        73.49
    1      default          1.85    5.2    1.00         1.00   <- the release's setting
    1      filtered         1.93    5.2    1.04         1.00
    1      rle              2.27   19.1    1.22         3.69
    1      huffman_only     4.57   61.1    2.47        11.78
    1      fixed            1.91    7.1    1.03         1.37
    2      default          1.89    5.0    1.02         0.97
    3      default          2.07    4.9    1.12         0.94
    6      default          2.73    3.1    1.47         0.60

Level 1 with the default strategy stays. No setting is faster by more than 8 % (level 0,
which stores: 73x the bytes), because most of the time is Pillow's per-row adaptive filter
choice, not zlib; the other strategies are slower and larger. Level 6 would make releases
40 % smaller for 47 % more encode time: worth it only when storage or transfer dominates
(``render.png_compress_level=6``; it changes every image's bytes).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import zlib
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from record import run_context, write_row  # noqa: E402 - the bench folder is not a package

STRATEGIES = {"default": zlib.Z_DEFAULT_STRATEGY, "filtered": zlib.Z_FILTERED, "rle": zlib.Z_RLE,
              "huffman_only": zlib.Z_HUFFMAN_ONLY, "fixed": zlib.Z_FIXED}
SETTINGS = [(0, "default"), (1, "default"), (1, "filtered"), (1, "rle"), (1, "huffman_only"), (1, "fixed"),
            (2, "default"), (3, "default"), (6, "default")]


def sample(release: Path, per_subset: int) -> list[Image.Image]:
    """Decoded RGB images: the first ``per_subset`` of each subset folder."""
    images = []
    for folder in sorted(p for p in (release / "images").iterdir() if p.is_dir()):
        for path in sorted(folder.glob("*.png"))[:per_subset]:
            with Image.open(path) as im:
                images.append(im.convert("RGB"))
    return images


def encode_all(images: list[Image.Image], level: int, strategy: str) -> tuple[float, int]:
    """(CPU seconds, total bytes) to PNG-encode ``images`` with one setting."""
    size = 0
    t0 = time.process_time()
    for im in images:
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=level, compress_type=STRATEGIES[strategy])
        size += buf.tell()
    return time.process_time() - t0, size


def writers(images: list[Image.Image], repeat: int, markdown: Path | None = None, context=None) -> None:
    """Each release PNG writer and libpng row filter against Pillow at level 1; pixels checked."""
    import imagecodecs
    import numpy as np

    from rose_gen.render.png import DEFAULT_PNG_ENCODER, DEFAULT_PNG_LEVEL, PNG_ENCODERS

    arrays = [np.asarray(im) for im in images]
    candidates = {f"{name} (registered)": (lambda a, n=name: PNG_ENCODERS.get(n).encode(a, 1))
                  for name in PNG_ENCODERS.names()}
    default = PNG_ENCODERS.get(DEFAULT_PNG_ENCODER).encode
    for level in sorted({2, 3, DEFAULT_PNG_LEVEL} - {1}):
        mark = ", the release default" if level == DEFAULT_PNG_LEVEL else ""
        candidates[f"{DEFAULT_PNG_ENCODER} at level {level}{mark}"] = lambda a, lv=level: default(a, lv)
    for label, flag in (("none", 8), ("sub", 16), ("up", 32), ("average", 64), ("paeth", 128)):
        candidates[f"libpng, filter {label}"] = lambda a, f=flag: imagecodecs.png_encode(a, level=1, filter=f)
    results = {}
    for name, encode in candidates.items():
        best = None
        for _ in range(repeat):
            t0 = time.process_time()
            outputs = [encode(a) for a in arrays]
            dt = time.process_time() - t0
            best = dt if best is None else min(best, dt)
        for a, png in zip(arrays, outputs, strict=True):
            with Image.open(io.BytesIO(png)) as im:
                assert np.array_equal(np.asarray(im.convert("RGB")), a), f"{name}: pixels differ"
        results[name] = (best, sum(len(o) for o in outputs))
    base_t, base_b = results["pillow (registered)"]
    print(f"{len(arrays)} images, pixels identical for every writer; writer CPU_s time_vs_pillow size_vs_pillow")
    for name, (t, b) in results.items():
        print(f"{name:24s} {t:6.2f} {t / base_t:6.2f} {b / base_b:6.2f}")
        if markdown:
            intro = (f"The release PNG writers and libpng's single row filters on {len(arrays)} images sampled "
                     "from a release, at zlib level 1 unless the row names a level, best CPU of the repeats; every output decoded and its "
                     "pixels compared with the source (identical for every writer). Reproduce: "
                     "`.venv/bin/python bench/bench_png.py RELEASE --writers --markdown`.")
            write_row(markdown, "PNG writers", intro, ["images", "CPU s", "time vs Pillow", "size vs Pillow"],
                      name, [str(len(arrays)), f"{t:.2f}", f"{t / base_t:.2f}×", f"{b / base_b:.2f}×"], context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--per-subset", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--writers", action="store_true", help="compare the release PNG writers (issue 27)")
    parser.add_argument("--markdown", nargs="?", type=Path, const=True, default=None, metavar="FILE",
                        help="record the figures in FILE (default bench/png_writers.md with --writers, "
                             "else bench/png_settings.md), the files docs/performance.md quotes")
    args = parser.parse_args()
    context = run_context()
    if args.markdown is True:
        args.markdown = ROOT / "bench" / ("png_writers.md" if args.writers else "png_settings.md")
    images = sample(args.release, args.per_subset)
    if args.writers:
        writers(images, args.repeat, args.markdown, context)
        return
    results = {}
    for level, strategy in SETTINGS:
        runs = [encode_all(images, level, strategy) for _ in range(args.repeat)]
        results[(level, strategy)] = (min(t for t, _ in runs), runs[0][1])
    base_t, base_b = results[(1, "default")]
    print(f"{len(images)} images; level strategy CPU_s MB time_vs_l1 size_vs_l1")
    for (level, strategy), (t, b) in results.items():
        print(f"{level:5d}  {strategy:14s} {t:6.2f} {b / 2**20:7.1f} {t / base_t:7.2f} {b / base_b:10.2f}")
        if args.markdown:
            intro = (f"Pillow's PNG encoder at each zlib level and strategy on {len(images)} images sampled from a "
                     "release, best CPU of the repeats, against level 1 with the default strategy (what the "
                     "Pillow writer uses). Reproduce: `.venv/bin/python bench/bench_png.py RELEASE --markdown`.")
            write_row(args.markdown, "PNG settings", intro,
                      ["images", "CPU s", "MB", "time vs level 1", "size vs level 1"],
                      f"level {level}, {strategy}", [str(len(images)), f"{t:.2f}", f"{b / 2**20:.1f}",
                                                    f"{t / base_t:.2f}×", f"{b / base_b:.2f}×"], context)


if __name__ == "__main__":
    main()

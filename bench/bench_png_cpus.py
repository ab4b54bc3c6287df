"""Are the release PNG bytes the same whatever the x86-64 CPU's vector extensions?

    .venv/bin/python bench/bench_png_cpus.py RELEASE [--images 40] [--cpus Nehalem Haswell] [--markdown]

zlib-ng (the default writer's compressor, ``render.png_encoder=zlibng-up``) picks SSE, AVX2 or
AVX-512 code paths at run time. The release promises the same bytes for the same config, seed and
pinned versions on any machine, so this encodes a sample of a release's images with every
registered writer at its release level natively, then again in this same interpreter under
``qemu-x86_64 -cpu MODEL`` (Debian's ``qemu-user``: the emulated CPU reports only that model's
extensions, so zlib-ng takes that model's paths), and compares a sha256 over all outputs.
Nehalem has SSE4.2 and no AVX (numpy's x86-64-v2 baseline; older models cannot import numpy),
Haswell adds AVX2; the native run is whatever this machine has (AVX-512 here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, add_markdown_flag, bench_command, run_context, write_row  # noqa: E402


def digests(release: Path, images: int) -> dict[str, str]:
    """sha256 over the PNG bytes of the first ``images`` release images, per writer (at its level)."""
    import numpy as np
    from PIL import Image

    from rose_gen.render.png import DEFAULT_PNG_ENCODER, DEFAULT_PNG_LEVEL, PNG_ENCODERS

    files = sorted(release.glob("images/*/*.png"))
    step = max(1, len(files) // images)
    arrays = [np.asarray(Image.open(f).convert("RGB")) for f in files[::step][:images]]
    out = {}
    for name in PNG_ENCODERS.names():
        level = DEFAULT_PNG_LEVEL if name == DEFAULT_PNG_ENCODER else 1
        h = hashlib.sha256()
        for a in arrays:
            h.update(PNG_ENCODERS.get(name).encode(a, level))
        out[f"{name} (level {level})"] = h.hexdigest()
    return out


def cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), [])
    return "+".join(f for f in ("sse4_2", "avx2", "avx512f") if f in flags) or "baseline"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--images", type=int, default=40)
    parser.add_argument("--cpus", nargs="+", default=["Nehalem", "Haswell"])
    parser.add_argument("--json", action="store_true", help="print this run's digests as JSON (used under qemu)")
    add_markdown_flag(parser, "png_cpus.md")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(digests(args.release, args.images)))
        return
    qemu = shutil.which("qemu-x86_64")
    if platform.machine() != "x86_64" or qemu is None:
        sys.exit("bench_png_cpus: needs an x86-64 machine with qemu-x86_64 (apt-get install qemu-user)")
    context = run_context()
    runs = {f"native ({cpu_flags()})": digests(args.release, args.images)}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for cpu in args.cpus:
        proc = subprocess.run([qemu, "-cpu", cpu, sys.executable, __file__, str(args.release), "--images",
                               str(args.images), "--json"], capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            sys.exit(f"bench_png_cpus: under qemu -cpu {cpu}: {proc.stderr.strip().splitlines()[-1:]}")
        runs[f"qemu -cpu {cpu}"] = json.loads(proc.stdout.strip().splitlines()[-1])
    native = next(iter(runs.values()))
    for label, got in runs.items():
        same = {w: got[w] == native[w] for w in native}
        print(f"{label:28s} " + "  ".join(f"{w}: {'same' if s else 'DIFFERENT'} ({got[w][:12]})"
                                          for w, s in same.items()))
        if args.markdown:
            intro = (f"A sha256 over the PNG bytes of {args.images} images of a release, written by every registered "
                     "writer at its release level, natively and in the same interpreter under `qemu-x86_64 -cpu "
                     "MODEL` (the emulated CPU reports only that model's vector extensions, so zlib-ng and libpng "
                     "take its code paths). Reproduce: `" + bench_command() + "`.")
            write_row(args.markdown, "PNG bytes across CPU code paths", intro, [*native, "bytes as native"], label,
                      [got[w][:16] for w in native] + ["yes" if all(same.values()) else "**no**"], context)
    if not all(got == native for got in runs.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()

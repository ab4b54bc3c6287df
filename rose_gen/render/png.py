"""PNG writers for release images, chosen by measurement (``bench/bench_png.py``).

Every writer is deterministic for pinned library versions (no text chunks, no time
stamp, one IDAT stream; the compressors are bundled in the wheels, so the bytes do not
depend on the machine's zlib) and lossless: the same RGB array decodes back from each. They
differ only in speed and size:

* ``zlibng-up`` (default since issue 27's second step): the same fixed *Up* row filter
  computed in numpy (one vectorised subtraction), compressed by zlib-ng (bundled in
  ``imagecodecs``) at ``render.png_compress_level`` into one IDAT chunk. zlib-ng's level 2
  (its ``deflate_fast``) is the default: measured on 150 v0_1 images (``bench/bench_png.py``)
  it encodes in about half the time of ``libpng-up`` at level 1 and writes about 0.72x its
  bytes; zlib-ng's level 1 (``deflate_quick``) is faster still but 1.38x the bytes.
* ``libpng-up`` (the default of releases made between issue 27's two steps): libpng
  through ``imagecodecs`` with one fixed row filter, *Up* (each row minus the row above),
  and zlib at ``render.png_compress_level``. Grid images repeat along columns, so Up leaves
  mostly zero rows; measured on 300 v0_1 images it encodes in 0.34x the time of Pillow at
  the same level, 1.05x the bytes.
* ``pillow``: Pillow's encoder, which tries every filter on every row (most of its time);
  the writer of releases made before issue 27 (their recorded configs have no
  ``render.png_encoder`` and are read as ``pillow``, so ``rose-verify`` re-renders them
  byte for byte).

``render.png_encoder`` selects one; the release records it (and ``render.png_compress_level``)
in its config and the writing libraries' versions in ``export_summary.json``
(``versions["zlib-ng (imagecodecs)"]``, ``versions["libpng (imagecodecs)"]``, ``versions["pillow"]``).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import numpy as np
from PIL import Image

from rose_eval.registry import Registry

DEFAULT_PNG_ENCODER = "zlibng-up"
DEFAULT_PNG_LEVEL = 2  # zlib-ng deflate_fast: its level 1 (deflate_quick) writes 1.38x the bytes
LEGACY_PNG_ENCODER = "pillow"  # what a recorded config without render.png_encoder was written with
PNG_FILTER_UP = 32  # libpng's PNG_FILTER_UP flag (imagecodecs.PNG.FILTER.UP)


@dataclass(frozen=True)
class PngEncoder:
    """One way to write an RGB array as PNG bytes."""

    name: str
    encode: Callable[[np.ndarray, int], bytes]
    version: Callable[[], str]


PNG_ENCODERS: Registry[PngEncoder] = Registry("PNG encoder")


def _pillow_encode(image: np.ndarray, level: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(image, mode="RGB").save(buf, format="PNG", compress_level=int(level))
    return buf.getvalue()


def _pillow_version() -> str:
    from PIL import features

    return f"pillow {metadata.version('pillow')}, zlib {features.version('zlib')}"


def _libpng_up_encode(image: np.ndarray, level: int) -> bytes:
    import imagecodecs

    return imagecodecs.png_encode(np.ascontiguousarray(image), level=int(level), filter=PNG_FILTER_UP)


def _libpng_up_version() -> str:
    import imagecodecs

    return f"imagecodecs {imagecodecs.__version__}, {imagecodecs.png_version()}, filter up"


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_FILTER_UP = 2  # the PNG filter type byte of Up


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def up_filtered(image: np.ndarray) -> bytes:
    """The PNG scanlines of an RGB uint8 array, every row with the Up filter (row minus the
    row above, modulo 256; the first row against zeros), each led by its filter type byte."""
    height, width, _ = image.shape
    rows = image.reshape(height, 3 * width)
    out = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    out[:, 0] = _FILTER_UP
    out[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=out[1:, 1:])  # uint8 wraps modulo 256, as PNG's Up does
    return out.tobytes()


def _zlibng_up_encode(image: np.ndarray, level: int) -> bytes:
    import imagecodecs

    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"an RGB uint8 (H, W, 3) array is needed, got {image.dtype} {image.shape}")
    height, width, _ = image.shape
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    idat = imagecodecs.zlibng_encode(up_filtered(image), level=int(level))
    return _PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def _zlibng_up_version() -> str:
    import imagecodecs

    return f"imagecodecs {imagecodecs.__version__}, {imagecodecs.zlibng_version()}, filter up"


PNG_ENCODERS.add("pillow", PngEncoder("pillow", _pillow_encode, _pillow_version))
PNG_ENCODERS.add("libpng-up", PngEncoder("libpng-up", _libpng_up_encode, _libpng_up_version))
PNG_ENCODERS.add("zlibng-up", PngEncoder("zlibng-up", _zlibng_up_encode, _zlibng_up_version))


def encode_rgb_png(image: np.ndarray, level: int, encoder: str = DEFAULT_PNG_ENCODER) -> bytes:
    """PNG bytes of an RGB uint8 array (H, W, 3) with the named writer."""
    return PNG_ENCODERS.get(encoder).encode(image, level)


def encoder_version(encoder: str) -> str:
    """The named writer and the versions of the libraries that make its bytes."""
    return f"{encoder}: {PNG_ENCODERS.get(encoder).version()}"

"""PNG writers for release images, chosen by measurement (``bench/bench_png.py``).

Every writer is deterministic for pinned library versions (no text chunks, no time
stamp, one IDAT stream) and lossless: the same RGB array decodes back from each. They
differ only in speed and size:

* ``libpng-up`` (default since issue 27): libpng through ``imagecodecs`` with one fixed
  row filter, *Up* (each row minus the row above), and zlib at ``render.png_compress_level``.
  Grid images repeat along columns, so Up leaves mostly zero rows; measured on 300 v0_1
  images it encodes in 0.34x the time of Pillow at the same level, 1.05x the bytes. It
  also bundles its own zlib, so the bytes do not depend on the machine's zlib.
* ``pillow``: Pillow's encoder, which tries every filter on every row (most of its time);
  the writer of releases made before issue 27 (their recorded configs have no
  ``render.png_encoder`` and are read as ``pillow``, so ``rose-verify`` re-renders them
  byte for byte).

``render.png_encoder`` selects one; the release records it in its config and the writing
library's version in ``export_summary.json`` (``versions["png encoder"]``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import numpy as np
from PIL import Image

from rose_eval.registry import Registry

DEFAULT_PNG_ENCODER = "libpng-up"
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


PNG_ENCODERS.add("pillow", PngEncoder("pillow", _pillow_encode, _pillow_version))
PNG_ENCODERS.add("libpng-up", PngEncoder("libpng-up", _libpng_up_encode, _libpng_up_version))


def encode_rgb_png(image: np.ndarray, level: int, encoder: str = DEFAULT_PNG_ENCODER) -> bytes:
    """PNG bytes of an RGB uint8 array (H, W, 3) with the named writer."""
    return PNG_ENCODERS.get(encoder).encode(image, level)


def encoder_version(encoder: str) -> str:
    """The named writer and the versions of the libraries that make its bytes."""
    return f"{encoder}: {PNG_ENCODERS.get(encoder).version()}"

"""The release's PNG writers: lossless, deterministic, what they claim to be, recorded."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_gen.release.config import (
    ConfigError,
    compose_config,
    config_from_recorded,
    load_config,
    recorded_config,
)
from rose_gen.release.pipeline import generate_release
from rose_gen.render.png import (
    DEFAULT_PNG_ENCODER,
    DEFAULT_PNG_LEVEL,
    PNG_ENCODERS,
    encode_rgb_png,
    encoder_version,
)
from tests.fixtures.latin_source import latin_overrides


def grid_like(seed: int = 0, size: int = 96) -> np.ndarray:
    """A small image with the structure of a release image: a repeated tile with a few odd cells."""
    rng = np.random.default_rng(seed)
    tile = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    image = np.tile(tile, (size // 16, size // 16, 1))
    image[16:32, 48:64] = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    return image


def decode(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as im:
        assert im.format == "PNG" and im.mode == "RGB"
        return np.asarray(im.convert("RGB"))


def row_filters(png: bytes) -> set[int]:
    """The filter type byte of every scanline (IDAT streams joined and inflated)."""
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(png):
        (length,), tag = struct.unpack(">I", png[pos:pos + 4]), png[pos + 4:pos + 8]
        data = png[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            width, height = struct.unpack(">II", data[:8])
        elif tag == b"IDAT":
            idat += data
        elif tag not in (b"IEND",):
            raise AssertionError(f"unexpected chunk {tag!r}")  # no text or time chunks
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    assert len(raw) == stride * height
    return {raw[i * stride] for i in range(height)}


@pytest.mark.parametrize("name", PNG_ENCODERS.names())
def test_every_writer_is_lossless_and_deterministic(name: str):
    image = grid_like()
    first, second = encode_rgb_png(image, 1, name), encode_rgb_png(image.copy(), 1, name)
    assert first == second
    assert np.array_equal(decode(first), image)


def test_zlibng_up_writes_the_up_filter_on_every_row_and_one_idat():
    png = encode_rgb_png(grid_like(), 2, "zlibng-up")
    assert row_filters(png) == {2}
    assert png.count(b"IDAT") == 1 and png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (7, 1), (33, 45)])
def test_zlibng_up_is_lossless_on_awkward_shapes_and_wrapping_values(shape: tuple[int, int]):
    rng = np.random.default_rng(sum(shape))
    image = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    image[..., 0] = 255 * (np.arange(shape[1]) % 2)  # 0 <-> 255 jumps: the Up difference wraps
    assert np.array_equal(decode(encode_rgb_png(image, 2, "zlibng-up")), image)
    with pytest.raises(ValueError, match="RGB uint8"):
        encode_rgb_png(image[..., :2], 2, "zlibng-up")


def test_zlibng_up_compresses_at_the_level_it_is_given():
    image = np.concatenate([grid_like(seed) for seed in range(4)], axis=1)
    stored, default = encode_rgb_png(image, 0, "zlibng-up"), encode_rgb_png(image, 2, "zlibng-up")
    assert len(default) < len(stored) / 2 and default != encode_rgb_png(image, 6, "zlibng-up")


def test_libpng_up_writes_the_up_filter_on_every_row():
    # Up (2) on every row but the first, which libpng may write as None (0) or Up
    filters = row_filters(encode_rgb_png(grid_like(), 1, "libpng-up"))
    assert filters <= {0, 2} and 2 in filters
    assert len(row_filters(encode_rgb_png(grid_like(), 1, "pillow"))) >= 1


@pytest.mark.parametrize("writer", ["zlibng-up", "libpng-up"])
def test_writers_differ_only_in_bytes_on_a_real_release(tmp_path: Path, writer: str):
    runs = {}
    for name in (writer, "pillow"):
        out = tmp_path / name
        config = load_config([f"output_dir={out}", "progress=false", f"render.png_encoder={name}",
                              *latin_overrides(scenes=2, dev=1)])
        runs[name] = generate_release(config).path
    new, old = sorted(runs[writer].rglob("*.png")), sorted(runs["pillow"].rglob("*.png"))
    assert [p.relative_to(runs[writer]) for p in new] == [p.relative_to(runs["pillow"]) for p in old]
    new_bytes = sum(p.stat().st_size for p in new)
    old_bytes = sum(p.stat().st_size for p in old)
    assert new_bytes <= 1.3 * old_bytes  # the size bound
    assert any(a.read_bytes() != b.read_bytes() for a, b in zip(new, old, strict=True))
    for a, b in zip(new, old, strict=True):
        assert np.array_equal(decode(a.read_bytes()), decode(b.read_bytes())), a.name
    summary = json.loads((runs[writer] / "export_summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["render"]["png_encoder"] == writer
    assert summary["versions"]["libpng (imagecodecs)"].startswith("libpng ")
    assert summary["versions"]["zlib-ng (imagecodecs)"].startswith("zlib_ng ")
    assert summary["versions"]["imagecodecs"] != "not installed"


def test_default_and_legacy_records():
    assert (DEFAULT_PNG_ENCODER, DEFAULT_PNG_LEVEL) == ("zlibng-up", 2)
    assert "zlib_ng" in encoder_version("zlibng-up") and "libpng" in encoder_version("libpng-up")
    assert "pillow" in encoder_version("pillow")
    # a config recorded before render.png_encoder existed was written by Pillow
    recorded = recorded_config(compose_config(["profile=mini"]))
    assert recorded["render"]["png_compress_level"] == DEFAULT_PNG_LEVEL
    assert config_from_recorded(recorded).render.png_encoder == "zlibng-up"
    del recorded["render"]["png_encoder"]
    assert config_from_recorded(recorded).render.png_encoder == "pillow"


def test_unknown_writer_is_one_line(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"render.png_encoder: unknown PNG encoder 'fpng'; known: .*libpng-up"):
        load_config([f"output_dir={tmp_path / 'x'}", "render.png_encoder=fpng"])

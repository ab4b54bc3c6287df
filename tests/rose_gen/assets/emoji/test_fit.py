"""The fast paths of the art fit return exactly what the straightforward computation does."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from rose_gen.assets.emoji import fit
from rose_gen.assets.emoji.artwork import art_box, probe_render
from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.shortcuts import art_box_area, ink_mask
from tests.rose_gen.assets.emoji.conftest import KNOWN, asset


def _slow_ink(image: Image.Image) -> np.ndarray:
    return ink_mask(fit.on_white(image.convert("RGBA")), fit.WHITE)


def _random_image(mode: str, seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (37, 23, 4), dtype=np.uint8)
    pixels[rng.random((37, 23)) < 0.2, 3] = 0
    pixels[rng.random((37, 23)) < 0.2, 3] = 255
    return Image.frombytes(mode, (23, 37), pixels.tobytes())


@pytest.mark.parametrize("mode", ["RGBA", "RGBa"])
@pytest.mark.parametrize("seed", range(4))
def test_premultiplied_ink_equals_ink_on_white(mode, seed):
    image = _random_image(mode, seed)
    assert np.array_equal(fit.premultiplied_ink(image), _slow_ink(image))


@pytest.mark.parametrize("mode", ["RGBA", "RGBa"])
def test_per_channel_table_path_equals_ink_on_white(mode, monkeypatch):
    monkeypatch.setattr(fit, "_ink_limits", lambda _mode: None)  # as if compositing were not monotone
    image = _random_image(mode, 9)
    assert np.array_equal(fit.premultiplied_ink(image), _slow_ink(image))


def _slow_fitted_tile(probe: Image.Image, size: int, pad: int, share: float) -> np.ndarray | None:
    """Every scale of SCALE_TRIES resized and measured on white; the first nearest kept."""
    side = size - 2 * pad
    top, bottom, left, right = fit.ink_bounds(fit.on_white(probe))
    crop = probe.crop((left, top, right, bottom))
    target = share * side * side
    exact = (target / (crop.width * crop.height)) ** 0.5
    best = None
    for step in fit.SCALE_TRIES:
        scale = exact * (1.0 + step * fit.SCALE_STEP)
        width, height = round(crop.width * scale), round(crop.height * scale)
        if max(width, height) > side or min(width, height) < 1:
            continue
        art = crop.convert("RGBa").resize((width, height), Image.Resampling.LANCZOS).convert("RGBA")
        miss = abs(art_box_area(ink_mask(fit.on_white(art), fit.WHITE)) - target)
        if best is None or miss < best[0]:
            best = (miss, art)
    if best is None:
        return None
    cell = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    art = best[1]
    cell.paste(art, (pad + (side - art.width) // 2, pad + (side - art.height) // 2))
    return fit.on_white(cell)


def _keys(n: int) -> list[str]:
    """``n`` identities spread over the manifest that every vendor draws with ink, and KNOWN."""
    keys = sorted(k for k, r in identity_records().items() if r.get("art_fit"))
    return [KNOWN] + keys[:: max(1, len(keys) // n)][:n]


@pytest.mark.parametrize("vendor", ["twemoji", "openmoji", "noto"])
def test_fitted_tile_equals_trying_every_scale(vendor):
    for key in _keys(6):
        probe = probe_render(asset(vendor, key))
        crop = fit.fit_crop(probe)
        top, bottom, left, right = fit.ink_bounds(fit.on_white(probe))
        assert np.array_equal(np.asarray(crop), np.asarray(probe.crop((left, top, right, bottom)).convert("RGBa")))
        fitted = fit.fit_share(identity_records()[key]["art_fit"]["ink_box"].values())
        for size in (27, 42, 61, 100, 156):
            for share in (0.4 * fitted, 0.8 * fitted, fitted, 0.97):
                pad = art_box(size)[0]
                want = _slow_fitted_tile(probe, size, pad, share)
                if want is None:  # no scale fits: both refuse
                    with pytest.raises(ValueError, match="no scale fits"):
                        fit.fitted_crop_tile(crop, size, pad, share)
                    continue
                assert np.array_equal(fit.fitted_crop_tile(crop, size, pad, share), want), (key, size, share)
                assert np.array_equal(fit.fitted_tile(probe, size, pad, share), want)


def test_fit_crop_refuses_an_empty_probe():
    with pytest.raises(ValueError, match="no ink"):
        fit.fit_crop(Image.new("RGBA", (16, 16), (0, 0, 0, 0)))

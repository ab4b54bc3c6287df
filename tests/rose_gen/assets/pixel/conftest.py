"""Helpers shared by this folder's tests."""

from __future__ import annotations

import numpy as np


def blob_sprite(h: int, w: int, colour: tuple[int, int, int]) -> np.ndarray:
    """A solid RGBA rectangle with a dark outline and a lighter core (several colours)."""
    out = np.zeros((h, w, 4), dtype=np.uint8)
    out[..., :3] = colour
    out[..., 3] = 255
    out[[0, -1], :, :3] = 20
    out[:, [0, -1], :3] = 20
    out[h // 3: 2 * h // 3, w // 3: 2 * w // 3, :3] = 240
    out[1:3, 1:3, :3] = (colour[0] // 2, colour[1] // 2, colour[2] // 2)
    return out

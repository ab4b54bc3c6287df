"""Pixel art: the sprite library (atlas slicing, procedural and user sprites, pools),
the CDDA family, PixelEdit edits and their kinds, PixelContent pairs, pool shape rules
and pixel metrics.

May import: rose_gen.core and rose_gen.assets (visibility).
"""

"""Emoji artwork: the vendors (Twemoji, OpenMoji, Noto), their index, tiles, and the ink-box fit.

May import: rose_gen.core and rose_gen.assets (visibility, shortcuts).
"""

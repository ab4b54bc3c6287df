"""Artwork in, tiles out: fonts, emoji artwork, pixel art, and the measures on tiles.

``fonts``/``font_match`` (faces from the fonts manifest), ``emoji/`` (vendor artwork, fit),
``pixel/`` (sprite library, edits, pairs, pool rules, metrics), ``visibility`` and
``shortcuts`` (is a difference visible; could it be found without looking carefully).
May import: rose_gen.core, rose_eval. Never sources, render, scene, tasks, release, check, cli.
"""

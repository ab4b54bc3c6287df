"""The bottom layer: seeds, the plain data passed between stages, shared errors.

``rng`` (seed derivation), ``schema`` (frozen dataclasses: AssetPair, SceneSpec, TaskRow,
SceneRows ...), ``errors`` (errors raised low and caught high).
May import: rose_eval (vocabulary, seeding) and the standard library; nothing else of rose_gen.
"""

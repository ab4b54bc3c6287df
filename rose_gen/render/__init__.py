"""Scene spec -> PNG bytes: tiles, composition of the grid, cue images, degradation.

The only stage that touches a scene's pixels. May import: rose_gen.core, rose_gen.assets,
rose_gen.sources (the VisualSource contract). Never scene, tasks, release, check, cli.
"""

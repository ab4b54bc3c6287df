"""Scene specs: layout, regions, dev/test split, difficulty, presets, planning, redraws.

Config knobs + a source's pair pool -> SceneSpec (pure, seeded). Planning renders a
drawn scene to reject invisible exceptions (``redraw``), so this layer sits above render.
May import: rose_gen.core, assets, sources, render. Never tasks, release, check, cli.
"""

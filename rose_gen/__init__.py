"""rose_gen: the deterministic ROSE scene generator (config -> scenes -> images -> tasks -> release).

Folders, bottom to top (a module imports only from its own folder or lower ones):
core, assets, sources, render, scene, tasks, release, check, cli. See ARCHITECTURE.md.
"""

__version__ = "0.1.0"
GENERATOR_NAME = "rose_gen"

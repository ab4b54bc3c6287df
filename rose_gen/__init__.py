"""rose_gen: the deterministic ROSE scene generator (config -> scenes -> images -> tasks -> release)."""

__version__ = "0.1.0"
GENERATOR_NAME = "rose_gen"

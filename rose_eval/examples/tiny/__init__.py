"""The bundled tiny example (data files; see rose_gen/release/tiny_example.py)."""

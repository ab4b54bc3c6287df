"""The bundled tiny example (data files; see rose_gen/tiny_example.py)."""

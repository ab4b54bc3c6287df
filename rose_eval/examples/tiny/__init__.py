"""The bundled tiny example (data files; see rose_eval/examples/make_tiny.py)."""

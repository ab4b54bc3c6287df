"""Scene spec -> task rows: the protocol strings (prompts) and the registered templates.

May import: rose_gen.core, rose_gen.scene (regions), rose_eval (vocabulary, formal answers).
"""

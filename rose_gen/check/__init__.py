"""Reading a release back: verify (re-derive and check), audit (pair statistics),
preview (contact sheets), replay (rebuild a v0.1 folder from its rows).

May import: any layer up to rose_gen.release. Never cli.
"""

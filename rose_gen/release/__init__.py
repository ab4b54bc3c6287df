"""A run end to end: config, pipeline (plan -> render -> rows), provenance, shards, the atomic writer,
Parquet, column features, the dataset card, shard merging, and the evaluator's tiny example.

May import: every lower layer (core, assets, sources, render, scene, tasks). Never check or cli.
"""

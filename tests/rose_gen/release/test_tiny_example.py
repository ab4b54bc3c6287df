"""The evaluator's bundled tiny example is exactly what its builder writes."""

from __future__ import annotations

from rose_gen.release.tiny_example import TINY_DIR, build


def test_shipped_tiny_example_is_rebuilt_byte_for_byte(tmp_path):
    build(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["metadata_dev.jsonl", "metadata_test.jsonl", "predictions_test.jsonl"]
    for name in written:
        assert (tmp_path / name).read_bytes() == (TINY_DIR / name).read_bytes(), name

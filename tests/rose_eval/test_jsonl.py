"""The shared JSONL reader: blank lines, line numbers, and one-line errors naming file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose_eval.jsonl import JsonlFault, intact_objects, iter_jsonl_objects


class Bad(ValueError):
    """Stands for a command's own error class."""


FIX = "regenerate it"


def read(tmp_path: Path, data: bytes) -> list[tuple[int, dict]]:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)
    return list(iter_jsonl_objects(path, Bad, FIX))


def fails(tmp_path: Path, data: bytes, *needles: str) -> str:
    with pytest.raises(Bad) as info:
        read(tmp_path, data)
    message = str(info.value)
    assert "\n" not in message and message.endswith(f"; {FIX}"), message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


def test_blank_lines_are_skipped_and_line_numbers_kept(tmp_path):
    rows = read(tmp_path, b'\n{"a": 1}\n   \n\t\n{"b": [2]}\n\n')
    assert rows == [(2, {"a": 1}), (5, {"b": [2]})]


def test_line_ends_count_as_text_mode_counts_them(tmp_path):
    rows = read(tmp_path, b'{"a": 1}\r\n\r\n{"b": 2}\r{"c": 3}\n{"d": 4}')
    assert rows == [(1, {"a": 1}), (3, {"b": 2}), (4, {"c": 3}), (5, {"d": 4})]


def test_byte_order_mark_is_ignored(tmp_path):
    assert read(tmp_path, b'\xef\xbb\xbf{"a": 1}\n') == [(1, {"a": 1})]


def test_empty_file_has_no_rows(tmp_path):
    assert read(tmp_path, b"") == []


def test_invalid_json_names_file_line_and_column(tmp_path):
    message = fails(tmp_path, b'{"a": 1}\n\n{"a": oops}\n', "rows.jsonl:3: invalid JSON", "column 7")
    assert message.startswith(str(tmp_path / "rows.jsonl"))


def test_rows_before_an_error_are_yielded_lazily(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{oops\n')
    rows = iter_jsonl_objects(path, Bad, FIX)
    assert next(rows) == (1, {"a": 1})
    with pytest.raises(Bad, match="rows.jsonl:2: invalid JSON"):
        next(rows)


@pytest.mark.parametrize(("line", "kind"), [(b"[1, 2]", "an array"), (b'"text"', "a string"),
                                            (b"3", "a number"), (b"null", "null"), (b"true", "a boolean")])
def test_non_object_line(tmp_path, line, kind):
    fails(tmp_path, b'{"a": 1}\n' + line + b"\n", f"rows.jsonl:2: expected a JSON object, got {kind}")


def test_deep_nesting_is_an_error_not_a_crash(tmp_path):
    fails(tmp_path, b"[" * 100_000 + b"\n", "rows.jsonl:1: invalid JSON (nested too deeply)")


def test_undecodable_bytes_give_line_and_byte_offset(tmp_path):
    fails(tmp_path, b'{"a": 1}\n\n{"a": "x\xffy"}\n', "rows.jsonl:3: undecodable bytes", "not UTF-8",
          "at byte 9 of the line")


def test_undecodable_bytes_after_a_lone_carriage_return(tmp_path):
    fails(tmp_path, b'{"a": 1}\r{"a": "\xff"}\n', "rows.jsonl:2: undecodable bytes", "at byte 8 of the line")


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(Bad) as info:
        list(iter_jsonl_objects(tmp_path / "nope.jsonl", Bad, FIX))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'nope.jsonl'}: cannot read") and "\n" not in message
    assert "check the path" in message


def test_directory_is_one_line(tmp_path):
    with pytest.raises(Bad, match="cannot read"):
        list(iter_jsonl_objects(tmp_path, Bad, FIX))


def test_intact_objects_skip_cut_and_undecodable_lines_and_keep_the_text(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_bytes(b'{"item_id": "a"}\n{"item_id": "b", "raw_te\xc3\n\r\n[1]\n {"item_id": "c"} \n{"item_id": "d"')
    assert list(intact_objects(path)) == [('{"item_id": "a"}', {"item_id": "a"}), ('{"item_id": "c"}', {"item_id": "c"})]
    with pytest.raises(JsonlFault, match="cannot read"):
        list(intact_objects(tmp_path))

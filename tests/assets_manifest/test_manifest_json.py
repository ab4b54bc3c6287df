"""The manifest builders' shared JSON writer: one record a line, indent, atomic write."""

from __future__ import annotations

import json

from assets_manifest.build.manifest_json import dumps_one_record_per_line

DOC = {"schema": "x/1", "note": "é", "items": [{"b": 1, "a": [1, 2]}, {"b": 2, "a": []}], "empty": []}


def test_records_on_one_line_each_and_text_round_trips():
    text = dumps_one_record_per_line(DOC)
    assert json.loads(text) == DOC
    assert text.splitlines() == [
        "{",
        '"schema": "x/1",',
        '"note": "é",',
        '"items": [',
        '  {"b":1,"a":[1,2]},',
        '  {"b":2,"a":[]}',
        "],",
        '"empty": []',
        "}",
    ]


def test_indent_shifts_keys_and_records():
    lines = dumps_one_record_per_line(DOC, indent=2).splitlines()
    assert lines[1] == '  "schema": "x/1",'
    assert lines[4] == '    {"b":1,"a":[1,2]},'
    assert lines[6] == "  ],"
    assert json.loads("\n".join(lines)) == DOC


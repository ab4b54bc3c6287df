"""One explicit column schema for a release's task rows (JSONL card, Parquet, ``datasets``).

A column type is a small plain value: ``"string"``, ``"int64"``, ``"float64"``, ``"bool"``,
``"image"``, ``("list", T)`` or ``("struct", ((name, T), ...))``. From it we render the
Arrow schema (Parquet), the Hugging Face features JSON stored in the Parquet schema
metadata, and the ``dataset_info.features`` YAML of the dataset card.

``region_params`` and ``image_region_params`` have several shapes in v0.1 (``{}``,
``{r1,r2}``, ``{c1,c2}``, ``{r1,r2,c1,c2}``, ``{exclude_type, exclude_params}``). They share
one struct type :data:`REGION_PARAMS` whose members are all nullable: ``r1, r2, c1, c2``
(int64), ``exclude_type`` (string) and ``exclude_params`` (struct r1, r2, c1, c2). Readers
of Parquet or ``datasets`` get nulls for the members a shape lacks; drop null keys to get
the JSONL dict back.

Columns are the fixed core fields of every v0.1 row in :data:`KNOWN_TYPES` order, then any
other field in order of first appearance; a field outside :data:`KNOWN_TYPES` gets its
type inferred from its values, and values of conflicting types are an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

ColumnType = Any  # str | tuple["list", ColumnType] | tuple["struct", tuple[tuple[str, ColumnType], ...]]

_BOUNDS = (("r1", "int64"), ("r2", "int64"), ("c1", "int64"), ("c2", "int64"))
REGION_PARAMS: ColumnType = ("struct", (*_BOUNDS, ("exclude_type", "string"), ("exclude_params", ("struct", _BOUNDS))))
STRINGS: ColumnType = ("list", "string")
IMAGE: ColumnType = "image"

_S, _I, _F, _B = "string", "int64", "float64", "bool"

# Every field v0.1 rows were seen to carry, with its type. Core fields come first.
CORE_FIELDS: tuple[tuple[str, ColumnType], ...] = (
    ("item_id", _S), ("scene_id", _S), ("image_id", _S), ("split", _S), ("dataset_version", _S),
    ("protocol_version", _S), ("item_seed", _I), ("primitive_type", _S), ("task_template", _S),
    ("task_mode", _S), ("reference_source", _S), ("selection_predicate", _S), ("target_rule", _S),
    ("region_type", _S), ("region_params", REGION_PARAMS), ("region_case", _S), ("cue_type", _S),
    ("prompt_global", _S), ("prompt_local", _S), ("expected_output_format", _S), ("ground_truth_count", _I),
    ("ground_truth_clicks", STRINGS), ("ground_truth_formal_answer", _S), ("all_target_cells", STRINGS),
    ("region_target_cells", STRINGS), ("region_non_target_count", _I), ("num_out_region_targets", _I),
    ("global_target_count", _I), ("region_target_count", _I), ("region_cell_count", _I), ("region_ratio", _F),
    ("difficulty", _S), ("rose_subset", _S), ("image", _S), ("prompt", _S), ("answer", _S), ("rows", _I),
    ("cols", _I), ("cell_size", _I), ("image_width", _I), ("image_height", _I), ("grid_size_profile", _S),
    ("target_cells", ("list", ("list", _I))), ("image_split", _S), ("image_cue_type", _S),
    ("image_region_type", _S), ("image_region_params", REGION_PARAMS), ("image_note", _S),
)
SUBSET_FIELDS: tuple[tuple[str, ColumnType], ...] = (
    ("font_size", _I), ("pair_key", _S), ("background_char", _S), ("target_char", _S), ("source_group", STRINGS),
    ("source_pair", STRINGS), ("pair_direction", _S), ("undirected_pair_key", _S), ("font_name", _S),
    ("similarity_level", _S), ("emoji_char", _S), ("unicode_key", _S), ("majority_style", _S),
    ("target_style", _S), ("background_path", _S), ("target_path", _S), ("emoji_name_zh", _S), ("h2_label", _S),
    ("h3_title", _S), ("background_emoji", _S), ("target_emoji", _S), ("background_unicode", _S),
    ("target_unicode", _S), ("background_name_en", _S), ("target_name_en", _S), ("background_name_zh", _S),
    ("target_name_zh", _S), ("similarity", _F), ("asset_resize_mode", _S),
    ("bridge_task", _B), ("bridge_type", _S), ("source_item_id", _S), ("source_click_item_id", _S),
    ("source_task_template", _S), ("source_task_mode", _S), ("image_cue_color", ("list", _I)),
)
KNOWN_TYPES: dict[str, ColumnType] = dict(CORE_FIELDS + SUBSET_FIELDS)


class SchemaError(ValueError):
    """A field's values have types that no single column type covers (one-line message)."""


def infer_type(value: Any) -> ColumnType | None:
    """Column type of one JSON value (``None`` for null or an empty list of unknown items)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return _B
    if isinstance(value, int):
        return _I
    if isinstance(value, float):
        return _F
    if isinstance(value, str):
        return _S
    if isinstance(value, (list, tuple)):
        item: ColumnType | None = None
        for v in value:
            item = merge_types(item, infer_type(v), "list item")
        return ("list", item) if item is not None else ("list", None)
    if isinstance(value, Mapping):
        return ("struct", tuple((str(k), infer_type(v)) for k, v in value.items()))
    raise SchemaError(f"value {value!r} of type {type(value).__name__} is not JSON data")


def merge_types(a: ColumnType | None, b: ColumnType | None, where: str) -> ColumnType | None:
    """The one type covering ``a`` and ``b`` (int widens to float; structs unite members)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if {a, b} == {_I, _F}:
        return _F
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "list":
        return ("list", merge_types(a[1], b[1], where))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "struct":
        members = dict(a[1])
        for name, t in b[1]:
            members[name] = merge_types(members.get(name), t, f"{where}.{name}")
        return ("struct", tuple(members.items()))
    raise SchemaError(f"field {where!r} mixes {describe(a)} and {describe(b)} values; make its values one type")


def _finish(t: ColumnType | None) -> ColumnType:
    """Replace still-unknown item types (all null / empty) by string."""
    if t is None:
        return _S
    if isinstance(t, tuple) and t[0] == "list":
        return ("list", _finish(t[1]))
    if isinstance(t, tuple) and t[0] == "struct":
        return ("struct", tuple((n, _finish(m)) for n, m in t[1]))
    return t


class ColumnCollector:
    """Accumulates :func:`row_columns` one row at a time (memory grows with fields, not rows).

    ``then`` chains collectors, so rows seen in two streams (the dev and the test split,
    interleaved as scenes arrive) give the columns of the first stream followed by the second.
    """

    def __init__(self) -> None:
        self.order: dict[str, None] = {}
        self.inferred: dict[str, ColumnType | None] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        """Take one row's fields (order of first appearance) and the types of unknown fields."""
        for name, value in row.items():
            self.order.setdefault(name, None)
            if name not in KNOWN_TYPES:
                self.inferred[name] = merge_types(self.inferred.get(name), infer_type(value), name)

    def then(self, other: ColumnCollector) -> ColumnCollector:
        """A collector equal to having seen this collector's rows, then ``other``'s."""
        out = ColumnCollector()
        out.order = {**self.order, **other.order}
        out.inferred = dict(self.inferred)
        for name, t in other.inferred.items():
            out.inferred[name] = merge_types(out.inferred.get(name), t, name)
        return out

    def columns(self) -> list[tuple[str, ColumnType]]:
        """Core fields, then the other fields by first appearance, typed."""
        order: dict[str, None] = dict.fromkeys(name for name, _ in CORE_FIELDS)
        order.update(self.order)
        return [(name, KNOWN_TYPES[name] if name in KNOWN_TYPES else _finish(self.inferred.get(name)))
                for name in order]


def row_columns(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, ColumnType]]:
    """The release's columns: core fields, then other fields by first appearance, typed."""
    collector = ColumnCollector()
    for row in rows:
        collector.add(row)
    return collector.columns()


def describe(t: ColumnType) -> str:
    """Short human form of a column type, e.g. ``list<string>``."""
    if isinstance(t, tuple) and t[0] == "list":
        return f"list<{describe(t[1]) if t[1] is not None else '?'}>"
    if isinstance(t, tuple) and t[0] == "struct":
        return "struct<" + ", ".join(f"{n}: {describe(m)}" for n, m in t[1]) + ">"
    return str(t)


def arrow_type(t: ColumnType) -> pa.DataType:
    """The Arrow type of a column type (``image`` is Hugging Face's struct of bytes and path)."""
    if t == IMAGE:
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if isinstance(t, tuple) and t[0] == "list":
        return pa.list_(arrow_type(t[1]))
    if isinstance(t, tuple) and t[0] == "struct":
        return pa.struct([(n, arrow_type(m)) for n, m in t[1]])
    return {_S: pa.string(), _I: pa.int64(), _F: pa.float64(), _B: pa.bool_()}[t]


def hf_feature(t: ColumnType) -> Any:
    """Hugging Face features JSON of a column type (the list form reads in old and new ``datasets``)."""
    if t == IMAGE:
        return {"_type": "Image"}
    if isinstance(t, tuple) and t[0] == "list":
        return [hf_feature(t[1])]
    if isinstance(t, tuple) and t[0] == "struct":
        return {n: hf_feature(m) for n, m in t[1]}
    return {"dtype": t, "_type": "Value"}


def yaml_feature(name: str, t: ColumnType) -> dict[str, Any]:
    """One entry of a dataset card's ``dataset_info.features`` list."""
    return {"name": name, **_yaml_body(t)}


def _yaml_body(t: ColumnType) -> dict[str, Any]:
    if t == IMAGE:
        return {"dtype": "image"}
    if isinstance(t, tuple) and t[0] == "list":
        inner = _yaml_body(t[1])
        return {"sequence": inner["dtype"] if set(inner) == {"dtype"} else inner}
    if isinstance(t, tuple) and t[0] == "struct":
        return {"struct": [yaml_feature(n, m) for n, m in t[1]]}
    return {"dtype": t}


def arrow_schema(columns: list[tuple[str, ColumnType]]) -> pa.Schema:
    """Arrow schema with the ``huggingface`` metadata ``datasets`` reads its features from."""
    features = {name: hf_feature(t) for name, t in columns}
    meta = json.dumps({"info": {"features": features}}, ensure_ascii=False, separators=(",", ":"))
    return pa.schema([(name, arrow_type(t)) for name, t in columns], metadata={b"huggingface": meta.encode()})


def drop_nulls(value: Any) -> Any:
    """``value`` with null dict members removed, recursively (Parquet struct -> JSONL dict)."""
    if isinstance(value, Mapping):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value

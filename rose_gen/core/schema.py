"""Plain data passed between the generator's stages (plan -> render -> tasks -> export).

Every class here is a frozen dataclass with ``to_json`` (a JSON-safe dict) and
``from_json`` (its inverse), so a scene can be written down, read back and compared.
Nothing here draws randomness or touches pixels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GENERATOR_NAME = "rose_gen"
GENERATOR_VERSION = "0.1.0"
DATASET_VERSION = f"{GENERATOR_NAME}-{GENERATOR_VERSION}"

# The four templates whose region is drawn per scene; T1 is always the whole grid.
REGION_TEMPLATES: tuple[str, ...] = (
    "T2_COUNT_LOCAL_NUMERIC",
    "T3_CLICK_LOCAL_NUMERIC",
    "T4_CLICK_VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION",
)

Cell = tuple[int, int]


@dataclass(frozen=True)
class AssetPair:
    """One majority/exception pairing, already oriented (majority first).

    ``pair_key`` identifies the *undirected* pair, so non-reuse is judged on it.
    ``row_fields`` are the v0.1 subset fields copied verbatim onto every task row of a
    scene that uses this pair (JSON-serialisable). ``render`` is what ``render_tile``
    needs (font file and face index, vendor paths, sprite ids ...), also JSON-safe.
    """

    source: str
    majority: str
    target: str
    pair_key: str
    row_fields: Mapping[str, Any] = field(default_factory=dict)
    render: Mapping[str, Any] = field(default_factory=dict)
    similarity: float | None = None


def plain_json(value: Any) -> Any:
    """A JSON-safe deep copy: mappings -> dict, tuples/lists -> list."""
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


def asset_pair_to_json(pair: AssetPair) -> dict[str, Any]:
    """An :class:`AssetPair` as a JSON-safe dict (field order kept)."""
    return {
        "source": pair.source,
        "majority": pair.majority,
        "target": pair.target,
        "pair_key": pair.pair_key,
        "row_fields": plain_json(pair.row_fields),
        "render": plain_json(pair.render),
        "similarity": pair.similarity,
    }


def asset_pair_from_json(data: Mapping[str, Any]) -> AssetPair:
    """Inverse of :func:`asset_pair_to_json`."""
    return AssetPair(
        source=data["source"],
        majority=data["majority"],
        target=data["target"],
        pair_key=data["pair_key"],
        row_fields=dict(data.get("row_fields", {})),
        render=dict(data.get("render", {})),
        similarity=data.get("similarity"),
    )


@dataclass(frozen=True)
class RegionSpec:
    """One task region.

    ``type`` is a region kind (ROW_RANGE, COL_RANGE, RECTANGLE, VISUAL_REGION, EXCLUSION,
    GLOBAL); ``params`` its v0.1 region_params (1-based inclusive bounds; EXCLUSION holds
    ``exclude_type`` and ``exclude_params``). ``case`` is the truthful region_case label
    (``zero``/``partial``/``all`` or ``fallback_<got>_wanted_<wanted>``); ``wanted_case``
    is what the sampler aimed for.
    """

    type: str
    params: Mapping[str, Any]
    case: str
    wanted_case: str

    @property
    def got_case(self) -> str:
        """The case the region really has (the label without its fallback wrapper)."""
        return self.case.split("_")[1] if self.case.startswith("fallback_") else self.case

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "params": plain_json(self.params),
            "case": self.case,
            "wanted_case": self.wanted_case,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RegionSpec:
        return cls(
            type=data["type"],
            params=plain_json(data["params"]),
            case=data["case"],
            wanted_case=data["wanted_case"],
        )


@dataclass(frozen=True)
class SceneSpec:
    """Everything needed to render one scene and derive its task rows (no pixels).

    ``scene_index`` is k (1-based); ids and image numbers follow from it (base image
    2k-1, cue image 2k). ``target_cells`` are 1-based (row, col) in placement order.
    ``regions`` maps T2..T5 template names to their regions (T1 is GLOBAL).
    ``difficulty`` maps every main template name to ``medium``/``hard`` and
    ``difficulty_inputs`` to the rule's recorded inputs. ``pair_cycle`` is 0 when the
    scene's pair is used for the first time in the subset, n on its (n+1)-th use.
    """

    subset: str
    source: str
    scene_index: int
    scene_id: str
    split: str
    id_prefix: str
    primitive_type: str
    item_seed_base: int
    image_split: str
    rows: int
    cols: int
    cell_size: int
    font_size: int | None
    grid_size_profile: str
    target_cells: tuple[Cell, ...]
    pair: AssetPair
    regions: Mapping[str, RegionSpec]
    cue_type: str
    difficulty: Mapping[str, str]
    difficulty_inputs: Mapping[str, Mapping[str, Any]]
    dataset_version: str = DATASET_VERSION
    protocol_version: str = "v0.3"
    pair_cycle: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def width(self) -> int:
        """Image width in pixels (cols x cell_size)."""
        return self.cols * self.cell_size

    @property
    def height(self) -> int:
        """Image height in pixels (rows x cell_size)."""
        return self.rows * self.cell_size

    @property
    def base_image_id(self) -> str:
        return f"{self.id_prefix}IMG_{2 * self.scene_index - 1:06d}"

    @property
    def cue_image_id(self) -> str:
        return f"{self.id_prefix}IMG_{2 * self.scene_index:06d}"

    def item_id(self, template_number: int) -> str:
        """Item id of template t (1..5): items 5k-4 .. 5k."""
        return f"{self.id_prefix}ITEM_{5 * (self.scene_index - 1) + template_number:06d}"

    def item_seed(self, template_number: int) -> int:
        """The recorded item_seed label: base + 10k + t."""
        return self.item_seed_base + 10 * self.scene_index + template_number

    def to_json(self) -> dict[str, Any]:
        return {
            "subset": self.subset,
            "source": self.source,
            "scene_index": self.scene_index,
            "scene_id": self.scene_id,
            "split": self.split,
            "id_prefix": self.id_prefix,
            "primitive_type": self.primitive_type,
            "item_seed_base": self.item_seed_base,
            "image_split": self.image_split,
            "rows": self.rows,
            "cols": self.cols,
            "cell_size": self.cell_size,
            "font_size": self.font_size,
            "grid_size_profile": self.grid_size_profile,
            "target_cells": [[r, c] for r, c in self.target_cells],
            "pair": asset_pair_to_json(self.pair),
            "regions": {name: region.to_json() for name, region in self.regions.items()},
            "cue_type": self.cue_type,
            "difficulty": dict(self.difficulty),
            "difficulty_inputs": plain_json(self.difficulty_inputs),
            "dataset_version": self.dataset_version,
            "protocol_version": self.protocol_version,
            "pair_cycle": self.pair_cycle,
            "extra": plain_json(self.extra),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SceneSpec:
        return cls(
            subset=data["subset"],
            source=data["source"],
            scene_index=int(data["scene_index"]),
            scene_id=data["scene_id"],
            split=data["split"],
            id_prefix=data["id_prefix"],
            primitive_type=data["primitive_type"],
            item_seed_base=int(data["item_seed_base"]),
            image_split=data["image_split"],
            rows=int(data["rows"]),
            cols=int(data["cols"]),
            cell_size=int(data["cell_size"]),
            font_size=data.get("font_size"),
            grid_size_profile=data["grid_size_profile"],
            target_cells=tuple((int(r), int(c)) for r, c in data["target_cells"]),
            pair=asset_pair_from_json(data["pair"]),
            regions={k: RegionSpec.from_json(v) for k, v in data["regions"].items()},
            cue_type=data["cue_type"],
            difficulty=dict(data["difficulty"]),
            difficulty_inputs=plain_json(data["difficulty_inputs"]),
            dataset_version=data.get("dataset_version", DATASET_VERSION),
            protocol_version=data.get("protocol_version", "v0.3"),
            pair_cycle=int(data.get("pair_cycle", 0)),
            extra=plain_json(data.get("extra", {})),
        )


@dataclass(frozen=True)
class ImageRecord:
    """One stored image and the fields copied onto task rows with an ``image_`` prefix.

    ``path`` is release-relative with forward slashes (``images/<subset>/<id>.png``);
    ``split`` is the image_split label (``main``/``pilot``), not dev/test.
    """

    image_id: str
    path: str
    width: int
    height: int
    split: str
    cue_type: str
    region_type: str
    region_params: Mapping[str, Any]
    note: str
    cue_color: tuple[int, int, int] | None = None  # cue images: RGB the highlight is drawn in

    def to_json(self) -> dict[str, Any]:
        extra = {} if self.cue_color is None else {"cue_color": [int(v) for v in self.cue_color]}
        return {
            "image_id": self.image_id,
            "path": self.path,
            "width": self.width,
            "height": self.height,
            "split": self.split,
            "cue_type": self.cue_type,
            "region_type": self.region_type,
            "region_params": plain_json(self.region_params),
            "note": self.note,
            **extra,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImageRecord:
        color = data.get("cue_color")
        return cls(**{**data, "region_params": plain_json(data["region_params"]),
                      "cue_color": None if color is None else tuple(int(v) for v in color)})


@dataclass(frozen=True)
class SceneRows:
    """The task rows of one scene: five main rows (T1..T5) and the bridge rows by template."""

    main: list[dict[str, Any]]
    bridges: dict[str, list[dict[str, Any]]]


BASE_IMAGE_NOTE = "base image without visual cue"
CUE_IMAGE_NOTE = "cue image with highlighted region"
CUE_TEMPLATE = "T4_CLICK_VISUAL_REGION"


def image_path(subset: str, image_id: str) -> str:
    """Release-relative image path: ``images/<subset>/<image_id>.png``."""
    return f"images/{subset}/{image_id}.png"


def base_image_record(scene: SceneSpec) -> ImageRecord:
    """The record of scene k's base image (image 2k-1, no cue)."""
    return ImageRecord(
        image_id=scene.base_image_id,
        path=image_path(scene.subset, scene.base_image_id),
        width=scene.width,
        height=scene.height,
        split=scene.image_split,
        cue_type="NONE",
        region_type="GLOBAL",
        region_params={},
        note=BASE_IMAGE_NOTE,
    )


def cue_image_record(scene: SceneSpec, cue_color: tuple[int, int, int] | None = None) -> ImageRecord:
    """The record of scene k's cue image (image 2k): the T4 rectangle highlighted in ``cue_color``."""
    region = scene.regions[CUE_TEMPLATE]
    return ImageRecord(
        image_id=scene.cue_image_id,
        path=image_path(scene.subset, scene.cue_image_id),
        width=scene.width,
        height=scene.height,
        split=scene.image_split,
        cue_type=scene.cue_type,
        region_type=region.type,
        region_params=dict(region.params),
        note=CUE_IMAGE_NOTE,
        cue_color=None if cue_color is None else tuple(int(v) for v in cue_color),
    )

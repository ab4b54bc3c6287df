"""Checking input rows before anything is scored: the evaluator's rules for a row, in one place.

A metadata row is checked against the protocol's vocabulary (:mod:`rose_eval.vocab`: task
modes, templates, region types) and against what its task mode needs to be scored:

- every row: a known ``task_mode`` and ``task_template``, positive integer ``rows`` and
  ``cols``, a known ``region_type`` with the ``region_params`` it reads
  (:data:`REGION_PARAMS`; EXCLUSION nests another region);
- what each task mode scores against (:data:`MODE_NEEDS`): COUNT needs
  ``ground_truth_count``; CLICK needs ``ground_truth_clicks``; CLICK_COUNT needs both;
- every gold coordinate list present (``ground_truth_clicks``, ``region_target_cells``,
  ``all_target_cells``, ``target_cells``) holds cells on the grid, and a count present
  equals the number of clicks and of region targets present (the gold agrees with itself).

A prediction row needs ``raw_text``: a string, or null for no answer (a missing key or a
JSON object is refused, not scored as a wrong answer). ``finish_reason``, when present,
is a string or null.

The first fault raises :class:`RowError`, printed by the CLI as one line
``file:line: field F: what is wrong; how to fix``. Rows that pass score exactly as the
public v0.1 evaluator scores them (no value is changed here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rose_eval.io import InputError, Record
from rose_eval.truth import TruthError, cells_of
from rose_eval.vocab import (
    BRIDGE_TEMPLATES,
    REGION_TYPES,
    TASK_MODES,
    TEMPLATE_ALIASES,
    TEMPLATE_ORDER,
)

KNOWN_TEMPLATES: tuple[str, ...] = (*TEMPLATE_ORDER, *BRIDGE_TEMPLATES, *TEMPLATE_ALIASES)
# region type -> the integer parameters it reads (EXCLUSION: a nested region instead)
REGION_PARAMS: dict[str, tuple[str, ...]] = {
    "GLOBAL": (),
    "ROW_RANGE": ("r1", "r2"),
    "COL_RANGE": ("c1", "c2"),
    "RECTANGLE": ("r1", "r2", "c1", "c2"),
    "VISUAL_REGION": ("r1", "r2", "c1", "c2"),
    "EXCLUSION": (),
}
GOLD_CELL_FIELDS: tuple[str, ...] = ("ground_truth_clicks", "region_target_cells",
                                     "all_target_cells", "target_cells")
REGEN_FIX = "regenerate the release (rose-gen) or restore the row from the release's metadata"


@dataclass(frozen=True)
class ModeNeeds:
    """The gold fields a task mode is scored against."""

    count: bool  # ground_truth_count required
    clicks: bool  # ground_truth_clicks required


MODE_NEEDS: dict[str, ModeNeeds] = {
    "COUNT": ModeNeeds(count=True, clicks=False),
    "CLICK": ModeNeeds(count=False, clicks=True),
    "CLICK_COUNT": ModeNeeds(count=True, clicks=True),
}


class RowError(InputError):
    """One input row that cannot be scored honestly: where, which field, what, how to fix."""

    def __init__(self, where: str, field: str, what: str, fix: str) -> None:
        super().__init__(what, where, fix)
        self.field = field

    def one_line(self) -> str:
        return " ".join(f"{self.where}: field {self.field}: {self.what}; {self.fix}".split())


@dataclass(frozen=True)
class Fault:
    """A bad field of a row (no place yet)."""

    field: str
    what: str
    fix: str


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _one_of(value: Any, names: Iterable[str]) -> str:
    return f"{value!r} is not one of {', '.join(names)}"


def _region_faults(region_type: Any, params: Any, type_field: str = "region_type",
                   params_field: str = "region_params") -> Fault | None:
    """The first fault of a region (type and parameters), None when it is well formed."""
    if region_type not in REGION_PARAMS:
        return Fault(type_field, _one_of(region_type, REGION_TYPES),
                     "use a region type of the protocol (rose_eval/vocab.py REGION_TYPES)")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        return Fault(params_field, f"must be an object, got {type(params).__name__}",
                     f"give {region_type}'s parameters as an object")
    for key in REGION_PARAMS[region_type]:
        if not _is_int(params.get(key)):
            got = "missing" if key not in params else f"{params[key]!r} is not an integer"
            return Fault(f"{params_field}.{key}", f"{region_type} needs an integer {key} ({got})",
                         REGEN_FIX)
    if region_type == "EXCLUSION":
        if "exclude_type" not in params:
            return Fault(f"{params_field}.exclude_type", "EXCLUSION needs the region it excludes",
                         REGEN_FIX)
        return _region_faults(params.get("exclude_type"), params.get("exclude_params"),
                              f"{params_field}.exclude_type", f"{params_field}.exclude_params")
    return None


def _cells_fault(row: Mapping[str, Any], field: str, rows: int, cols: int) -> Fault | None:
    value = row.get(field)
    if value is None:
        return None
    if not isinstance(value, (list, tuple, str)):
        return Fault(field, f"must be a list of cell labels like [\"R2,C5\"], got "
                            f"{type(value).__name__}", REGEN_FIX)
    try:
        cells = cells_of(value)
    except (TruthError, ValueError, TypeError) as exc:
        return Fault(field, str(exc), REGEN_FIX)
    off = sorted(c for c in cells if not (1 <= c[0] <= rows and 1 <= c[1] <= cols))
    if off:
        return Fault(field, f"cell R{off[0][0]},C{off[0][1]} is off the {rows} x {cols} grid",
                     REGEN_FIX)
    return None


def _count_of(value: Any) -> int:
    return len(cells_of(value)) if value else 0


def metadata_fault(row: Mapping[str, Any]) -> Fault | None:
    """The first reason a metadata row cannot be scored honestly, None when it can."""
    mode = row.get("task_mode")
    if mode not in MODE_NEEDS:
        hint = f" (did you mean {str(mode).upper()!r}?)" if str(mode).upper() in MODE_NEEDS else ""
        return Fault("task_mode", _one_of(mode, TASK_MODES) + hint,
                     "use the protocol's task mode, upper case")
    template = row.get("task_template")
    if template not in KNOWN_TEMPLATES:
        return Fault("task_template", _one_of(template, KNOWN_TEMPLATES),
                     "use a template name of the protocol (rose_eval/vocab.py)")
    for field in ("rows", "cols"):
        if not _is_int(row.get(field)) or row[field] < 1:
            got = "missing" if field not in row else repr(row[field])
            return Fault(field, f"must be a positive integer (got {got})", REGEN_FIX)
    fault = _region_faults(row.get("region_type"), row.get("region_params"))
    if fault is not None:
        return fault
    needs = MODE_NEEDS[mode]
    count = row.get("ground_truth_count")
    if needs.count and count is None:
        return Fault("ground_truth_count", f"missing: a {mode} item is scored against it",
                     REGEN_FIX)
    if count is not None and (not _is_int(count) or count < 0):
        return Fault("ground_truth_count", f"must be an integer >= 0 (got {count!r})", REGEN_FIX)
    if needs.clicks and row.get("ground_truth_clicks") is None:
        return Fault("ground_truth_clicks", f"missing: a {mode} item is scored against it "
                                            "(without it every DONE would pass)", REGEN_FIX)
    for field in GOLD_CELL_FIELDS:
        fault = _cells_fault(row, field, row["rows"], row["cols"])
        if fault is not None:
            return fault
    if count is not None:
        for field in ("ground_truth_clicks", "region_target_cells"):
            if row.get(field) is not None and _count_of(row[field]) != count:
                return Fault(field, f"holds {_count_of(row[field])} distinct cells but "
                                    f"ground_truth_count is {count}", REGEN_FIX)
    return None


def prediction_fault(row: Mapping[str, Any]) -> Fault | None:
    """The first reason a prediction row cannot be scored, None when it can."""
    if "raw_text" not in row:
        return Fault("raw_text", "missing (every prediction row carries the model's answer "
                                 "text there)",
                     "name the answer field raw_text (a string, or null when there is no answer)")
    text = row["raw_text"]
    if text is not None and not isinstance(text, str):
        return Fault("raw_text", f"must be a string or null, got {type(text).__name__}",
                     "write the model's answer text as a JSON string")
    reason = row.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        return Fault("finish_reason", f"must be a string or null, got {type(reason).__name__}",
                     "write the endpoint's finish_reason as given (e.g. \"stop\", \"length\")")
    return None


def check_rows(records: Iterable[Record], fault_of: Callable[[Mapping[str, Any]], Fault | None]
               ) -> None:
    """Raise :class:`RowError` for the first record ``fault_of`` finds fault with."""
    for record in records:
        fault = fault_of(record.row)
        if fault is not None:
            raise RowError(record.where, fault.field, fault.what, fault.fix)


def check_metadata(records: Iterable[Record]) -> None:
    """Every metadata record scorable (:func:`metadata_fault`), else RowError."""
    check_rows(records, metadata_fault)


def check_predictions(records: Iterable[Record]) -> None:
    """Every prediction record scorable (:func:`prediction_fault`), else RowError."""
    check_rows(records, prediction_fault)

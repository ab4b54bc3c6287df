"""``rose-audit <release>``: pair similarity, distinct assets, reuse, invisible exceptions, guessability.

Answer guessability (rose_gen/check/guessability.py) is reported and warned about, never the exit status.

Writes ``<release>.audit.json`` beside the release (or ``--out``) and prints a table. Exit status 0
when the audit is clean or only non-standard scenes have flagged exceptions, 1 when a
standard scene has an exception at or below the visibility threshold or majorities that
are not pixel-identical (``--strict``: any flagged exception), 2 on bad input (one line).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rose_eval.atomic import write_atomic
from rose_eval.cli.args import OneLineParser
from rose_gen.check.audit import AuditError, audit_release, audit_table, default_audit_path
from rose_gen.check.guessability import guessability_table


def build_parser() -> OneLineParser:
    """rose-audit's arguments."""
    p = OneLineParser(prog="rose-audit", description=__doc__.splitlines()[0])
    p.add_argument("release", help="release folder (metadata_{dev,test}.jsonl and images/)")
    p.add_argument("--out", default=None, help="where to write the JSON record (default: <release>.audit.json beside the release)")
    p.add_argument("--strict", action="store_true",
                   help="also fail on any flagged exception (whatever the preset) and on standard scenes "
                        "that exceed the shortcut limits (rose_gen.assets.shortcuts.STANDARD_LIMITS)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-audit``; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    root = Path(args.release)
    try:
        record = audit_release(root)
    except AuditError as exc:
        print(f"rose-audit: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else default_audit_path(root)
    try:
        write_atomic(out, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    except OSError as exc:
        print(f"rose-audit: error: cannot write {out} ({exc.strerror}); pass --out to a writable path",
              file=sys.stderr)
        return 2
    print(audit_table(record))
    flagged = sum(s["flagged"] for s in record["subsets"].values())
    imperceptible = sum(s["imperceptible"] for s in record["subsets"].values())
    print(f"rose-audit: {record['scenes']} scenes, {flagged} flagged exception(s) "
          f"({record['standard_flagged']} in standard scenes), {record['standard_majority_mismatch']} standard "
          f"scene(s) with non-identical majorities; wrote {out}")
    for name, s in record["subsets"].items():
        if s["imperceptible"]:
            print(f"rose-audit: {name}: {s['imperceptible']} exception(s) in {s['imperceptible_scenes']} scene(s) "
                  f"fail the perceptibility rule (stand out less than {s['perceptibility_margin']:g}x the "
                  "majority's own variation)")
    for note in record.get("preset_notes", []):
        print(f"rose-audit: preset: {note}")
    for broken in record["standard_limits_broken"]:
        print(f"rose-audit: standard limit exceeded: {broken}")
    print(guessability_table(record["guessability"]))
    failed = not record["ok"] or (args.strict and (flagged > 0 or imperceptible > 0 or bool(record["standard_limits_broken"])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

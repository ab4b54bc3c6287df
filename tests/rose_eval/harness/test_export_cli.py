"""rose-export's bad-input contract, the harness imports boundary and the settings guard."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rose_eval.cli.export import main as rose_export
from rose_eval.harness.common import ImageSettings, deviations, guard
from rose_eval.runners.openai_compat import ImageOptions

HARNESS_PACKAGES = ("inspect_ai", "lmms_eval", "vlmeval", "openpyxl", "openai")


def test_core_modules_never_import_a_harness():
    code = ("import sys, rose_eval.cli.eval, rose_eval.score, rose_eval.aggregate, rose_eval.io, "
            "rose_eval.cli.run, rose_eval.harness.vlmevalkit, rose_eval.harness.lmms_eval_task, "
            "rose_eval.harness.lmms_eval_log, rose_eval.cli.export; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HARNESS_PACKAGES!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("argv, words", [
    ([], "the following arguments are required"),
    (["vlmevalkit"], "the following arguments are required"),
    (["predictions", "nope", "x", "--output", "o.jsonl"], "invalid choice"),
    (["predictions", "inspect", "{tmp}/missing.eval", "--output", "{tmp}/p.jsonl"], "inspect log not found"),
    (["predictions", "inspect", "{tmp}/a.eval", "{tmp}/b.eval", "--output", "{tmp}/p.jsonl"], "exactly one"),
    (["predictions", "inspect", "{tmp}/text.eval", "--output", "{tmp}/p.jsonl"], "unreadable inspect log"),
    (["predictions", "vlmevalkit", "{tmp}/missing.xlsx", "--output", "{tmp}/p.jsonl"], "not found"),
    (["lmms-eval", "{tmp}/no_release", "{tmp}/tasks"], "no data/dev.parquet"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words, tmp_path, capsys):
    (tmp_path / "text.eval").write_text("not a log", encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    code = rose_export([arg.format(tmp=tmp_path) for arg in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("rose-export: error:") and "\n" not in err
    assert words in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_lmms_eval_output_must_be_a_folder(release, tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("x", encoding="utf-8")
    assert rose_export(["lmms-eval", str(release), str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_guard_lists_every_change_and_accepts_the_standard_run():
    assert deviations(ImageSettings()) == []
    assert guard(ImageSettings(detail="high"), allow=False, who="t") == []
    changed = ImageSettings(ImageOptions(image_format="jpeg", max_long_side=512, blank=True), detail="low",
                            prompt_order="joined")
    assert len(deviations(changed)) == 5
    with pytest.raises(ValueError, match="detail must be one of"):
        deviations(ImageSettings(detail="max"))
    with pytest.raises(ValueError, match="image_format"):
        deviations(ImageSettings(ImageOptions(image_format="webp")))

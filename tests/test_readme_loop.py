"""The README's loop, run as written: generate, run baselines and a model, score, report.

The lines of the README's "The whole loop" block are run one by one with bash in a fresh
folder, with this venv's commands on PATH; the only change is the endpoint, which points
at a real OpenAI-compatible server on 127.0.0.1 (the runner tests' server) instead of the
README's placeholder address.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rose_eval.runners.conftest import chat_servers, ok_reply

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER_URL = "http://127.0.0.1:8000/v1"


def readme_loop() -> list[str]:
    """The commands of the README's loop block, continuation lines joined, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## The whole loop\n.*?^```bash\n(.*?)^```", text, flags=re.S | re.M).group(1)
    commands, current = [], ""
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line).rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        if (current + line).strip():
            commands.append((current + line).strip())
        current = ""
    return commands


@pytest.mark.slow
def test_readme_loop_runs_end_to_end(tmp_path: Path):
    commands = readme_loop()
    assert 6 <= len(commands) <= 12, "the README's loop is about ten lines"
    assert any(PLACEHOLDER_URL in c for c in commands)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with chat_servers() as start:
        server = start(lambda i, body, headers: ok_reply("COUNT(1)"))
        for command in commands:
            proc = subprocess.run(["bash", "-c", command.replace(PLACEHOLDER_URL, server.url)], cwd=tmp_path,
                                  env=env, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, f"{command}\n{proc.stderr[-2000:]}"
        asked = server.count
    test_rows = (tmp_path / "out/mini/metadata_test.jsonl").read_text(encoding="utf-8").splitlines()
    assert asked == len(test_rows)  # the model run asked every test item once
    summary = json.loads((tmp_path / "out/eval_my-model/evaluation_summary.json").read_text(encoding="utf-8"))
    assert summary["analyses"]["chance_floor"]["available"] is True
    report = (tmp_path / "out/report.html").read_text(encoding="utf-8")
    assert "my-model" in report and "prior" in report

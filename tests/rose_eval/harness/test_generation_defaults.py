"""One source of generation defaults: rose-run's flags and request body, the inspect task and
the lmms-eval task folder all use runners/generation.py; this fails if any of them drifts."""

from __future__ import annotations

from pathlib import Path

import yaml

from rose_eval.cli.run import build_parser, resolve_config
from rose_eval.harness.inspect_task import rose
from rose_eval.harness.lmms_eval_task import task_folder_files, write_task_folder
from rose_eval.runners.generation import DEFAULTS
from rose_eval.runners.openai_compat import EndpointConfig, request_body


class _TaskYaml(yaml.SafeLoader):
    """PyYAML's safe loader that reads lmms-eval's ``!function`` tags as their text."""


_TaskYaml.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _generation_kwargs(text: str) -> dict:
    return yaml.load(text, Loader=_TaskYaml)["generation_kwargs"]  # noqa: S506 - a safe loader


def test_rose_run_flags_and_request_body_use_the_defaults(tmp_path):
    args = build_parser().parse_args(["--dataset_root", str(tmp_path), "--model", "m",
                                      "--base_url", "http://127.0.0.1:9/v1",
                                      "--output", str(tmp_path / "p.jsonl")])
    assert (args.temperature, args.max_tokens) == (DEFAULTS.temperature, DEFAULTS.max_tokens)
    endpoint = resolve_config(args, {}).endpoint
    bare = EndpointConfig(model="m", base_url="http://127.0.0.1:9/v1")
    assert endpoint is not None
    assert (endpoint.temperature, endpoint.max_tokens) == (bare.temperature, bare.max_tokens) == \
        (DEFAULTS.temperature, DEFAULTS.max_tokens)
    body = request_body(endpoint, [])
    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == \
        {"temperature": DEFAULTS.temperature, "max_tokens": DEFAULTS.max_tokens}  # no top_p


def test_inspect_task_uses_the_defaults(release):
    config = rose(dataset_root=str(release), limit=1).config
    assert (config.temperature, config.max_tokens) == (DEFAULTS.temperature, DEFAULTS.max_tokens)
    assert config.top_p is None


def test_lmms_eval_yaml_equals_the_defaults(release, tmp_path):
    expected = DEFAULTS.lmms_eval_generation_kwargs()
    assert _generation_kwargs(task_folder_files()["_default_template_yaml"]) == expected
    written = write_task_folder(release, tmp_path / "tasks")
    assert _generation_kwargs(Path(written["_default_template_yaml"]).read_text(encoding="utf-8")) == expected
    assert "top_p" not in expected

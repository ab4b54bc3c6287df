"""The inspect_ai task end to end against a real local OpenAI-compatible server."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ContentImage, ContentText
from PIL import Image

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.harness.common import BenchmarkChangeError, write_predictions
from rose_eval.harness.inspect_log import convert
from rose_eval.harness.inspect_task import rose
from rose_eval.vocab import SUBSET_ORDER, SUBSET_SHORT
from tests.rose_eval.harness.conftest import read_rows
from tests.rose_eval.runners.conftest import ok_reply

REPO = Path(__file__).resolve().parents[3]
MODEL = "openai-api/local/rose-test"


def _wrong(row: dict[str, Any]) -> str:
    """A grammar-valid answer that cannot pass: one count too many / one click too many."""
    if row["task_mode"] == "COUNT":
        return f"COUNT({row['ground_truth_count'] + 1})"
    gold = set(row["ground_truth_clicks"])
    extra = next(f"R{r},C{c}" for r in range(1, row["rows"] + 1) for c in range(1, row["cols"] + 1)
                 if f"R{r},C{c}" not in gold)
    clicks = sorted(gold | {extra})
    tail = f"SUBMIT({len(clicks)})" if row["task_mode"] == "CLICK_COUNT" else "DONE"
    return "".join(f"CLICK({cell}); " for cell in clicks) + tail


class Script:
    """Answers by recognising the item from the image bytes and the local prompt."""

    def __init__(self, release: Path, rows: list[dict[str, Any]]) -> None:
        self.by_key = {(hashlib.sha256((release / r["image"]).read_bytes()).hexdigest(),
                        r["prompt_local"].strip()): r for r in rows}
        ids = sorted(r["item_id"] for r in rows)
        self.plan = {item: ("wrong" if i % 3 == 1 else "malformed" if i % 7 == 5 else "right")
                     for i, item in enumerate(ids)}
        self.failing = ids[2]  # answers HTTP 400 every time: a request that fails for good
        self.retried = ids[3]  # answers 503 once, then the truth
        self.thinking = ids[6]  # the truth after an inline <think> block: invalid, as in rose-run
        self.plan[self.failing], self.plan[self.retried] = "error", "right"
        self.plan[self.thinking] = "think"
        self.seen: dict[str, int] = {}

    def row_of(self, body: dict[str, Any]) -> dict[str, Any]:
        parts = body["messages"][0]["content"]
        data = base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])
        return self.by_key[(hashlib.sha256(data).hexdigest(), parts[2]["text"])]

    def __call__(self, index: int, body: dict[str, Any], headers: dict[str, str]):
        row = self.row_of(body)
        item = row["item_id"]
        self.seen[item] = self.seen.get(item, 0) + 1
        if item == self.failing:
            return 400, {}, {"error": {"message": "image rejected", "type": "invalid_request_error"}}, 0.0
        if item == self.retried and self.seen[item] == 1:
            return 503, {}, {"error": {"message": "overloaded"}}, 0.0
        answer = {"right": row["ground_truth_formal_answer"], "wrong": _wrong(row),
                  "malformed": "I count three odd cells.",
                  "think": f"<think>odd cells at {row['ground_truth_clicks']}</think>\n"
                           + row["ground_truth_formal_answer"]}[self.plan[item]]
        return ok_reply(answer)


@pytest.fixture(scope="module")
def run(release, tmp_path_factory, module_chat_server):
    """One inspect eval of the whole test split; its log, predictions and rose-eval output."""
    tmp = tmp_path_factory.mktemp("inspect")
    rows = read_rows(release / "metadata_test.jsonl")
    script = Script(release, rows)
    server = module_chat_server(script)
    before = sorted(p.name for p in REPO.iterdir())
    log = inspect_eval(rose(dataset_root=str(release), on_error="score"), model=MODEL, model_base_url=server.url,
                       model_args={"api_key": "test-key"}, log_dir=str(tmp / "logs"),
                       display="none", max_connections=4)[0]
    assert sorted(p.name for p in REPO.iterdir()) == before  # nothing written into the repo
    predictions, manifest = convert(Path(log.location))
    preds_path = tmp / "inspect.jsonl"
    write_predictions(preds_path, predictions, manifest)
    out = tmp / "eval"
    assert rose_eval_main(["--dataset_root", str(release), "--split", "test", "--predictions",
                           str(preds_path), "--out_dir", str(out), "--n_boot", "50"]) == 0
    summary = json.loads((out / "evaluation_summary.json").read_text(encoding="utf-8"))
    per_item = {r["item_id"]: r for r in read_rows(out / "per_item_eval.jsonl")}
    return {"log": log, "rows": rows, "script": script, "server": server, "summary": summary,
            "per_item": per_item, "preds": preds_path, "release": release}


def test_scores_equal_rose_eval_pass_per_subset_exactly(run):
    metrics = {name: m.value for name, m in run["log"].results.scores[0].metrics.items()}
    table1 = run["summary"]["paper_metrics"]["table1"]
    for subset in SUBSET_ORDER:
        assert metrics[SUBSET_SHORT[subset]] == table1["by_subset"][subset]["PASS"]
    assert metrics["avg"] == table1["Avg. PASS"]
    assert metrics["rose_valid"] == table1["VALID"]
    assert metrics["rose_soft"] == table1["Avg. SOFT"]
    # Independently of both scorers: PASS is the share of items answered with the truth.
    plan = run["script"].plan
    for subset in SUBSET_ORDER:
        ids = [r["item_id"] for r in run["rows"] if r["rose_subset"] == subset]
        assert metrics[SUBSET_SHORT[subset]] == sum(plan[i] == "right" for i in ids) / len(ids)
    assert 0 < metrics["avg"] < 1


def test_micro_pass_has_a_standard_error_clustered_by_scene(run):
    metrics = {name: m.value for name, m in run["log"].results.scores[0].metrics.items()}
    per_item = run["per_item"]
    scenes: dict[str, list[float]] = {}
    for row in run["rows"]:
        scenes.setdefault(f"{row['rose_subset']}/{row['scene_id']}", []).append(per_item[row["item_id"]]["pass"])
    values = np.concatenate([np.asarray(v, dtype=float) for v in scenes.values()])
    assert metrics["mean"] == pytest.approx(values.mean())
    deviations = np.array([(np.asarray(v) - values.mean()).sum() for v in scenes.values()])
    clustered = np.sqrt((deviations ** 2).sum() * len(scenes) / (len(scenes) - 1)) / len(values)
    assert metrics["stderr"] == pytest.approx(clustered)
    plain = values.std(ddof=1) / np.sqrt(len(values))
    assert metrics["stderr"] != pytest.approx(plain)  # a scene's five tasks are not independent samples


def test_by_default_a_failed_request_reaches_inspects_own_retry(release, tmp_path, module_chat_server):
    def rejecting(index, body, headers):
        return 400, {}, {"error": {"message": "image rejected", "type": "invalid_request_error"}}, 0.0

    runs = {}
    for on_error in ("raise", "score"):
        server = module_chat_server(rejecting)
        task = rose(dataset_root=str(release), limit=2) if on_error == "raise" else \
            rose(dataset_root=str(release), limit=2, on_error="score")
        log = inspect_eval(task, model=MODEL, model_base_url=server.url, model_args={"api_key": "k"},
                           log_dir=str(tmp_path / on_error), display="none", retry_on_error=1,
                           fail_on_error=False)[0]
        runs[on_error] = (log, len(server.requests))
    raised, sent = runs["raise"]
    assert sent == 4  # each sample errored, and inspect's --retry-on-error ran it once more
    assert all(sample.error is not None for sample in raised.samples)
    predictions, manifest = convert(Path(raised.location))
    assert [p.error.startswith("inspect sample error: ") for p in predictions] == [True, True]
    assert all(p.raw_text is None for p in predictions)
    scored, sent = runs["score"]
    assert sent == 2  # a scored failure: nothing left for inspect to retry
    assert all(sample.error is None for sample in scored.samples)


def test_every_sample_score_equals_rose_eval_per_item(run):
    samples = run["log"].samples
    assert len(samples) == len(run["rows"]) == len(run["per_item"])
    for sample in samples:
        assert sample.scores["rose_scorer"].value == run["per_item"][sample.id]["pass"]


def test_failed_request_is_a_scored_failure_with_its_error(run):
    script, preds = run["script"], {r["item_id"]: r for r in read_rows(run["preds"])}
    failed = preds[script.failing]
    assert failed["raw_text"] is None and failed["error"].startswith("HTTP 400")
    assert "image rejected" in failed["error"]
    assert run["per_item"][script.failing]["api_error"] == 1
    assert run["per_item"][script.failing]["pass"] == 0
    # inspect retried the 503 and the item was then answered and passed.
    assert script.seen[script.retried] == 2 and preds[script.retried]["error"] is None
    assert run["per_item"][script.retried]["pass"] == 1
    assert run["summary"]["coverage"]["complete_submission"] is True


def test_inline_reasoning_is_judged_as_rose_run_judges_it(run):
    script, preds = run["script"], {r["item_id"]: r for r in read_rows(run["preds"])}
    sample = next(s for s in run["log"].samples if s.id == script.thinking)
    assert sample.output.completion == sample.metadata["row"]["ground_truth_formal_answer"]  # inspect strips
    assert preds[script.thinking]["raw_text"].startswith("<think>odd cells at")
    assert run["per_item"][script.thinking]["format_valid"] == 0
    assert sample.scores["rose_scorer"].value == 0


def test_images_arrive_as_the_released_png_at_full_size(run):
    release, requests = run["release"], run["server"].requests
    assert len(requests) == len(run["rows"]) + 1  # one per item, plus the retried 503
    for body in requests:
        first, image, last = body["messages"][0]["content"]
        row = run["script"].row_of(body)
        assert (first["type"], image["type"], last["type"]) == ("text", "image_url", "text")
        assert first["text"] == row["prompt_global"].strip()
        assert last["text"] == row["prompt_local"].strip()
        url = image["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        assert image["image_url"]["detail"] == "high"
        data = base64.b64decode(url.split(",", 1)[1])
        released = (release / row["image"]).read_bytes()
        assert data == released
        with Image.open(io.BytesIO(data)) as sent, Image.open(release / row["image"]) as original:
            assert sent.format == "PNG" and sent.size == original.size
        assert body["temperature"] == 0 and body["max_tokens"] == 256


def test_manifest_records_what_was_sent(run):
    manifest = json.loads(run["preds"].with_name("inspect.manifest.json").read_text(encoding="utf-8"))
    sent = manifest["sent"]
    # one logged model call per sample (inspect logs a retried call once)
    assert sent["content_parts_in_logged_requests"] == {"text + image_url + text": len(run["rows"])}
    assert sent["image_detail_in_logged_requests"] == {"high": len(run["rows"])}
    assert sent["images"]["formats"] == {"png": len(run["rows"])}
    sizes = {}
    for row in run["rows"]:
        with Image.open(run["release"] / row["image"]) as image:
            key = f"{image.width}x{image.height}"
        sizes[key] = sizes.get(key, 0) + 1
    assert sent["images"]["pixel_sizes"] == dict(sorted(sizes.items()))
    assert sent["settings"]["prompt_order"] == "global_image_local"
    assert manifest["benchmark_changes"] == []
    assert manifest["notes"][0].startswith("1 answer(s) scored with the inline <think> block")
    assert manifest["counts"] == {"items": len(run["rows"]), "errors": 1, "no_text": 1, "empty_text": 0}
    assert manifest["dataset"]["metadata_sha256"] == hashlib.sha256(
        (run["release"] / "metadata_test.jsonl").read_bytes()).hexdigest()
    assert manifest["harness"]["name"] == "inspect_ai" and manifest["harness"]["version"]


def test_converted_rows_keep_the_logged_response(run):
    """The server's model name, finish reason, token usage and wall time reach the rows,
    and the manifest sums them as rose-run's does (the report shows both)."""
    preds = read_rows(run["preds"])
    answered = [r for r in preds if r["error"] is None]
    assert answered and all(r["response_model"] == "rose-test" and r["finish_reason"] == "stop" for r in answered)
    assert all(r["usage"] == {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14} for r in answered)
    assert all(r["latency_s"] > 0 for r in answered)
    manifest = json.loads(run["preds"].with_name("inspect.manifest.json").read_text(encoding="utf-8"))
    sent = manifest["accounting"]["sent"]
    with_usage = sum(1 for r in preds if "usage" in r)
    assert sent["prompt_tokens"] == 11 * with_usage and sent["completion_tokens"] == 3 * with_usage
    assert sent["requests"] is None and manifest["accounting"]["wall_s"] is None  # not in the log's rows
    assert manifest["server"] == {"models": ["rose-test"], "fingerprints": [], "changed": False}


def test_a_model_that_changed_midway_is_flagged(tmp_path):
    from rose_eval.harness.common import Prediction
    from rose_eval.runners.accounting import identity_warning

    rows = [Prediction("a", "m", "COUNT(1)", response_model="gpt-x-0601"),
            Prediction("b", "m", "COUNT(2)", response_model="gpt-x-0901"),
            Prediction("c", "m", None, "HTTP 500")]
    written = write_predictions(tmp_path / "p.jsonl", rows, {})
    server = json.loads(written.read_text(encoding="utf-8"))["server"]
    assert server["changed"] and server["models"] == ["gpt-x-0601", "gpt-x-0901"]
    assert "gpt-x-0601 -> gpt-x-0901" in identity_warning(server, "rose-export")
    # fields a harness did not log are not written (old converted files stay byte-identical)
    assert read_rows(tmp_path / "p.jsonl")[2] == {"item_id": "c", "model": "m", "raw_text": None, "error": "HTTP 500"}


# ---------------------------------------------------------------------------- settings


@pytest.mark.parametrize("kwargs, words", [
    ({"image_format": "jpeg"}, "JPEG"),
    ({"image_detail": "low"}, "detail=low"),
    ({"image_detail": "auto"}, "detail=auto"),
    ({"max_long_side": 256}, "downscaled"),
    ({"blank_image": True}, "blank"),
    ({"prompt_order": "image_first"}, "prompt order"),
])
def test_benchmark_changes_are_refused_without_the_opt_in(release, kwargs, words):
    with pytest.raises(BenchmarkChangeError, match=words) as caught:
        rose(dataset_root=str(release), limit=1, **kwargs)
    assert "allow_benchmark_changes=true" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_allowed_change_is_applied_warned_and_recorded(release, capsys):
    task = rose(dataset_root=str(release), limit=2, image_format="jpeg", max_long_side=200,
                image_detail="low", allow_benchmark_changes=True)
    assert "WARNING: benchmark changed" in capsys.readouterr().err
    sample = task.dataset[0]
    parts = sample.input[0].content
    assert [type(p) for p in parts] == [ContentText, ContentImage, ContentText]
    assert parts[1].detail == "low" and parts[1].image.startswith("data:image/jpeg;base64,")
    with Image.open(io.BytesIO(base64.b64decode(parts[1].image.split(",", 1)[1]))) as sent:
        assert sent.format == "JPEG" and max(sent.size) == 200
    changes = task.metadata["rose"]["benchmark_changes"]
    assert len(changes) == 3 and sample.metadata["image_sent"]["format"] == "jpeg"


def test_standard_sample_hands_inspect_the_released_file(release, test_rows):
    task = rose(dataset_root=str(release), subsets="PixelEdit", templates=["T4"])
    assert [s.id for s in task.dataset] == [r["item_id"] for r in test_rows
                                           if r["rose_subset"] == "ROSE-PixelEdit"
                                           and r["task_template"] == "T4_CLICK_VISUAL_REGION"]
    sample = task.dataset[0]
    image = sample.input[0].content[1]
    assert Path(image.image) == (release / sample.metadata["row"]["image"]).resolve()
    assert image.detail == "original" and sample.target == sample.metadata["row"]["ground_truth_formal_answer"]


def test_bad_arguments_are_one_line_errors(release, tmp_path):
    with pytest.raises(ValueError, match="on_error"):
        rose(dataset_root=str(release), on_error="ignore")
    with pytest.raises(ValueError, match="is not a directory"):
        rose(dataset_root=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="unknown subset"):
        rose(dataset_root=str(release), subsets="Latin")


def test_a_changed_run_is_flagged_in_the_converted_manifest(release, tmp_path, capsys, module_chat_server):
    from rose_eval.cli.export import main as rose_export

    server = module_chat_server(lambda index, body, headers: ok_reply("COUNT(1)"))
    task = rose(dataset_root=str(release), limit=2, image_format="jpeg", allow_benchmark_changes=True)
    log = inspect_eval(task, model=MODEL, model_base_url=server.url, model_args={"api_key": "k"},
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    sent = base64.b64decode(server.requests[0]["messages"][0]["content"][1]["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(sent)).format == "JPEG"
    preds = tmp_path / "p.jsonl"
    assert rose_export(["predictions", "inspect", log.location, "--output", str(preds)]) == 0
    assert "WARNING: benchmark changed: images re-encoded as JPEG" in capsys.readouterr().err
    manifest = json.loads(preds.with_name("p.manifest.json").read_text(encoding="utf-8"))
    assert manifest["sent"]["images"]["formats"] == {"jpeg": 2}
    assert manifest["sent"]["images"]["source"].startswith("re-encoded by the task")
    assert [p["raw_text"] for p in read_rows(preds)] == ["COUNT(1)"] * 2


def test_the_task_includes_interface_control_items_when_asked(tmp_path) -> None:
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    release = generate_release(load_config([f"output_dir={tmp_path / 'r'}", "progress=false", "export=controls",
                                            *latin_overrides(scenes=2, dev=1)])).path
    plain = rose(str(release), templates="T1")
    task = rose(str(release), templates="T1", controls="all")
    ids = [s.id for s in task.dataset]
    assert ids[:len(plain.dataset)] == [s.id for s in plain.dataset]
    assert len(ids) == 4 * len(plain.dataset)
    for sample in task.dataset:
        kinds = [type(part) for part in sample.input[0].content]
        if str(sample.id).endswith("__text_only"):
            assert kinds == [ContentText, ContentText]  # no image part
            assert "A is the majority symbol" in sample.input[0].content[-1].text
        else:
            assert kinds == [ContentText, ContentImage, ContentText]
        assert sample.target == sample.metadata["row"]["ground_truth_formal_answer"]

"""lmms-eval --log_samples output -> predictions, checked against rose-eval.

The samples files are built the way lmms-eval's evaluator and tracker write them: per doc
``doc_id``, ``target`` (str), ``filtered_resps`` (a list of str; ``resps`` dropped when
equal), the hashes, ``input`` and every metric value ``process_results`` returned; the
older layout also keeps ``doc`` without its image columns and no ROSE answer text.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import datasets
import pytest

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.cli.export import main as rose_export
from rose_eval.harness import lmms_eval_task as lmms
from rose_eval.harness.common import write_predictions
from rose_eval.harness.lmms_eval_log import _item_and_texts, convert
from rose_eval.io import InputError
from rose_eval.vocab import SUBSET_ORDER
from tests.rose_eval.harness.conftest import read_rows


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, default=str, ensure_ascii=False).encode()).hexdigest()


# What lmms-eval 0.7.x's API wrappers answer once their retries are spent (the text of a
# real run against a local endpoint that refused the key).
FAILED = ("[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 401 - {'error': {'message': "
          "'Incorrect API key provided', 'type': 'invalid_request_error'}}")


def _failed(i: int) -> bool:
    return i % 7 == 6


def _answer(i: int, doc: dict[str, Any]) -> str:
    if _failed(i):
        return FAILED
    return ["", "COUNT(0)", doc["ground_truth_formal_answer"]][i % 3] if i % 4 else doc["ground_truth_formal_answer"]


def _sample(i: int, doc: dict[str, Any], answer: str, *, old_layout: bool,
            raw: str | None = None) -> dict[str, Any]:
    """One samples line; ``raw`` is the model output before lmms-eval's filters made ``answer``."""
    metrics = lmms.process_results(doc, [answer])
    line: dict[str, Any] = {"doc_id": i, "target": str(doc["ground_truth_formal_answer"]),
                            "filtered_resps": [answer], "doc_hash": _digest(doc["item_id"]),
                            "prompt_hash": _digest(lmms.doc_to_text(doc)),
                            "target_hash": _digest(doc["ground_truth_formal_answer"]),
                            "input": lmms.doc_to_text(doc)}
    if raw is not None:  # the tracker keeps resps only when the filters changed the output
        line["resps"] = [[raw]]
    if old_layout:  # doc kept without image-named columns; metric values without the answer text
        line["doc"] = {k: v for k, v in doc.items() if "image" not in k}
        line.update({k: {f: v for f, v in r.items() if f != "raw_text"} for k, r in metrics.items()})
    else:
        line.update(metrics)
    return line


@pytest.fixture(scope="module")
def lmms_run(release, tmp_path_factory):
    """A run folder as lmms-eval --output_path leaves it, and the numbers it reported."""
    root = tmp_path_factory.mktemp("lmms_out")
    model_dir = root / "out" / "my-model"
    model_dir.mkdir(parents=True)
    cache = str(tmp_path_factory.mktemp("hf_cache"))
    reported, thinking = {}, None
    for split, old in (("test", False), ("dev", True)):
        docs = datasets.load_dataset("parquet", data_files={split: str(release / "data" / f"{split}.parquet")},
                                     cache_dir=cache)[split]
        lines, records = [], []
        for i, doc in enumerate(docs):
            answer, raw = _answer(i, dict(doc)), None
            if split == "test" and i == 4:  # lmms-eval stripped an inline <think> before scoring
                raw, thinking = f"<think>looking</think>\n{answer}", doc["item_id"]
            line = _sample(i, dict(doc), answer, old_layout=old, raw=raw)
            lines.append(json.dumps(line, default=str, ensure_ascii=False))
            records.append(lmms.process_results(dict(doc), [answer])["pass"])  # as lmms-eval scores
        (model_dir / f"20260101_120000_samples_rose_{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        reported[split] = {"pass": lmms.aggregate_pass(records), "soft": lmms.aggregate_soft(records),
                           "by_subset": {s: getattr(lmms, f"aggregate_pass_{s.removeprefix('ROSE-')}")(records)
                                         for s in SUBSET_ORDER}}
    (model_dir / "20260101_120000_results.json").write_text(json.dumps({
        "results": {f"rose_{s}": {"pass,none": v["pass"]} for s, v in reported.items()},
        "configs": {"rose_test": {"generation_kwargs": {"max_new_tokens": 256, "temperature": 0}}},
        "config": {"model": "openai_compatible_chat", "model_args": "model_version=my-model,api_key=sk-secret"},
        "model_name": "my-model", "lmms_eval_version": "0.5.0",
        "n-samples": {"rose_test": {"original": 25, "effective": 25}}}), encoding="utf-8")
    return root / "out", reported, thinking


def test_converted_samples_give_the_pass_lmms_eval_reported(lmms_run, release, tmp_path):
    """Equal, except where lmms-eval's filter stripped a <think> block: rose-eval scores the raw output."""
    out, reported, thinking = lmms_run
    think_subset = next(r["rose_subset"] for r in read_rows(release / "metadata_test.jsonl")
                        if r["item_id"] == thinking)
    predictions, manifest = convert([out])
    assert len(predictions) == 50 and {p.model for p in predictions} == {"my-model"}
    preds = tmp_path / "lmms.jsonl"
    write_predictions(preds, predictions, manifest)
    for split in ("test", "dev"):
        eval_dir = tmp_path / f"eval_{split}"
        assert rose_eval_main(["--dataset_root", str(release), "--split", split, "--predictions", str(preds),
                               "--out_dir", str(eval_dir), "--no_analyses"]) == 0
        table1 = json.loads((eval_dir / "evaluation_summary.json").read_text())["paper_metrics"]["table1"]
        for subset in SUBSET_ORDER:
            got, expected = table1["by_subset"][subset]["PASS"], reported[split]["by_subset"][subset]
            if (split, subset) == ("test", think_subset):  # passes in lmms-eval only (stripped <think>)
                assert got == pytest.approx(expected - 1 / 5, abs=1e-12)
            else:
                assert got == expected
        if split == "dev":
            assert table1["Avg. PASS"] == reported[split]["pass"]
            assert table1["Avg. SOFT"] == reported[split]["soft"]
        assert 0 < table1["Avg. PASS"] < 1


def test_answer_text_comes_through_both_layouts(lmms_run, release):
    out, _, _ = lmms_run
    predictions = {p.item_id: p for p in convert([out])[0]}
    for split in ("test", "dev"):
        for i, row in enumerate(read_rows(release / f"metadata_{split}.jsonl")):
            prediction = predictions[row["item_id"]]
            if _failed(i):
                assert prediction.raw_text is None
                assert prediction.error == f"lmms-eval: {FAILED}"
            else:
                assert prediction.error is None and prediction.raw_text is not None
    assert [p for p in predictions.values() if p.raw_text == ""]  # an empty answer stays an answer


def test_failure_text_is_an_error_in_lmms_eval_and_in_rose_eval(lmms_run, release, tmp_path):
    """lmms-eval's failure text scores as an endpoint error, in the task and after conversion."""
    out, _, _ = lmms_run
    row = read_rows(release / "metadata_test.jsonl")[0]
    record = lmms.process_results(row, [FAILED])["pass"]
    assert record["api_error"] == 1 and record["raw_text"] is None and record["error"].startswith("lmms-eval: [LMMS")
    assert lmms.process_results(row, ["COUNT(1)"])["pass"]["api_error"] == 0
    preds = tmp_path / "p.jsonl"
    assert rose_export(["predictions", "lmms-eval", str(out), "--output", str(preds)]) == 0
    manifest = json.loads((tmp_path / "p.manifest.json").read_text(encoding="utf-8"))
    failed = sum(_failed(i) for i in range(25)) * 2  # both splits have 25 rows
    assert failed > 0 and manifest["counts"]["errors"] == failed and manifest["counts"]["no_text"] == failed
    assert any(note.startswith(f"{failed} request(s) failed after lmms-eval's retries") for note in manifest["notes"])
    out_dir = tmp_path / "eval"
    assert rose_eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                           "--out_dir", str(out_dir), "--no_analyses"]) == 0
    summary = json.loads((out_dir / "evaluation_summary.json").read_text())
    assert summary["overall"]["api_error_rate"] == sum(_failed(i) for i in range(25)) / 25


def test_failure_text_in_an_older_record_or_the_filtered_answer_is_found(release):
    """A record scored before the task knew the marker, and the old layout, still convert to errors."""
    row = read_rows(release / "metadata_test.jsonl")[0]
    stale = {**lmms.process_results(row, ["COUNT(1)"])["pass"], "raw_text": FAILED, "error": None}
    for line in ({"doc_id": 0, "filtered_resps": [FAILED], "pass": stale},
                 {"doc_id": 0, "filtered_resps": [FAILED], "doc": {"item_id": row["item_id"]}},
                 {"doc_id": 0, "filtered_resps": ["COUNT(1)"], "resps": [[FAILED]],
                  "doc": {"item_id": row["item_id"]}}):
        item_id, raw, scored, error = _item_and_texts(line)
        assert (item_id, raw, scored) == (row["item_id"], None, None) and error == f"lmms-eval: {FAILED}"


def test_the_raw_output_is_scored_not_lmms_evals_filtered_one(lmms_run, tmp_path):
    out, _, thinking = lmms_run
    predictions, manifest = convert([out])
    by_id = {p.item_id: p for p in predictions}
    assert by_id[thinking].raw_text.startswith("<think>looking</think>")
    assert manifest["notes"][0].startswith("1 answer(s) changed by lmms-eval's filters")


def test_manifest_records_the_run_without_secrets(lmms_run, tmp_path):
    out, _, _ = lmms_run
    assert rose_export(["predictions", "lmms-eval", str(out), "--output", str(tmp_path / "p.jsonl")]) == 0
    text = (tmp_path / "p.manifest.json").read_text(encoding="utf-8")
    manifest = json.loads(text)
    assert "sk-secret" not in text and manifest["harness"]["model_args"] == "model_version=my-model,api_key=[REDACTED]"
    assert manifest["harness"]["lmms_eval_version"] == "0.5.0" and len(manifest["harness"]["samples_files"]) == 2
    assert manifest["counts"]["items"] == 50 and manifest["counts"]["empty_text"] > 0
    assert "prompt_global" in manifest["sent"]["task_functions"]


def test_bad_samples_are_one_line_errors(lmms_run, tmp_path, capsys):
    out, _, _ = lmms_run
    with pytest.raises(InputError, match="not found"):
        convert([tmp_path / "missing"])
    with pytest.raises(InputError, match="no lmms-eval samples files"):
        convert([tmp_path])
    files = sorted(out.rglob("*samples_rose_test.jsonl"))
    with pytest.raises(InputError, match="appears twice"):
        convert([files[0], files[0]])
    bad = tmp_path / "20260101_samples_rose_test.jsonl"
    bad.write_text('{"doc_id": 0, "filtered_resps": ["COUNT(1)"]}\n', encoding="utf-8")
    with pytest.raises(InputError, match="without a ROSE item id") as caught:
        convert([bad])
    assert f"{bad}:1" in caught.value.one_line()
    bad.write_text("{not json\n", encoding="utf-8")
    assert rose_export(["predictions", "lmms-eval", str(bad), "--output", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rose-export: error: invalid JSON") and "\n" not in err and f"{bad}:1" in err
    assert not (tmp_path / "x.jsonl").exists()

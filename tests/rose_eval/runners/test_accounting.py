"""The full response kept per row, the run's accounting and a flagged server change,
against a real server on 127.0.0.1 that records the usage it sent."""

from __future__ import annotations

import html
import json
import re
import threading
from pathlib import Path

from rose_eval.cli.eval import main as eval_main
from rose_eval.cli.run import main

from .conftest import ok_reply, write_release

BASE_KEYS = {"item_id", "model", "raw_text", "error", "latency_s", "attempts", "finish_reason", "usage"}


def _run(root: Path, server, output: Path, *extra: str) -> int:
    return main(["--dataset_root", str(root), "--split", "test", "--model", "m", "--base_url", server.url,
                 "--api_key_env", "ROSE_TEST_NO_KEY", "--output", str(output), "--retry_base_delay", "0.01",
                 "--no_progress", *extra])


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class UsageServer:
    """A script whose usage differs per request, with reasoning and a fingerprint; it
    records every usage object it sent. ``switch_at``: from that request on it answers
    as another model with another fingerprint."""

    def __init__(self, switch_at: int | None = None) -> None:
        self.sent: list[dict] = []
        self.lock = threading.Lock()
        self.switch_at = switch_at

    def __call__(self, i, body, headers):
        status, extra, reply, delay = ok_reply("COUNT(3)")
        usage = {"prompt_tokens": 1000 + 7 * i, "completion_tokens": 20 + i % 5,
                 "completion_tokens_details": {"reasoning_tokens": 10 + i % 3}}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        switched = self.switch_at is not None and i >= self.switch_at
        reply["model"] = "model-b-2025" if switched else "model-a-2024"
        reply["system_fingerprint"] = "fp_bbb" if switched else "fp_aaa"
        reply["usage"] = usage
        reply["choices"][0]["message"]["reasoning_content"] = f"thinking {i}"
        with self.lock:
            self.sent.append(usage)
        return status, extra, reply, delay


def test_totals_equal_the_usage_the_server_sent(tmp_path, chat_server, capsys):
    release = write_release(tmp_path / "rel")  # 20 items
    script = UsageServer()
    server = chat_server(script)
    out = tmp_path / "p.jsonl"
    assert _run(release.root, server, out, "--concurrency", "4", "--no_cache",
                "--price_in", "2.5", "--price_out", "10") == 0
    assert server.count == 20 and len(script.sent) == 20
    acc = json.loads((tmp_path / "p.manifest.json").read_text())["accounting"]
    prompt = sum(u["prompt_tokens"] for u in script.sent)
    completion = sum(u["completion_tokens"] for u in script.sent)
    reasoning = sum(u["completion_tokens_details"]["reasoning_tokens"] for u in script.sent)
    assert acc["sent"] == {"answers": 20, "requests": 20, "prompt_tokens": prompt, "completion_tokens": completion,
                           "reasoning_tokens": reasoning, "answers_without_usage": 0}
    assert acc["cached"]["answers"] == 0
    assert acc["cost_usd"] == round((prompt * 2.5 + completion * 10) / 1e6, 6)
    assert acc["price_usd_per_million"] == {"in": 2.5, "out": 10}
    assert acc["wall_s"] > 0
    rows = _rows(out)
    assert {r["usage"]["reasoning_tokens"] for r in rows} == {10, 11, 12}
    assert all(r["response_model"] == "model-a-2024" and r["system_fingerprint"] == "fp_aaa" for r in rows)
    assert sorted(r["reasoning"] for r in rows) == sorted(f"thinking {i}" for i in range(20))
    assert "warning" not in capsys.readouterr().err


def test_cached_rows_cost_nothing_and_are_counted_apart(tmp_path, chat_server):
    release = write_release(tmp_path / "rel")
    script = UsageServer()
    server = chat_server(script)
    cache = ["--cache_dir", str(tmp_path / "cache"), "--price_in", "1", "--price_out", "1"]
    assert _run(release.root, server, tmp_path / "a.jsonl", *cache) == 0
    assert _run(release.root, server, tmp_path / "b.jsonl", *cache) == 0
    assert server.count == 20
    first = json.loads((tmp_path / "a.manifest.json").read_text())["accounting"]
    second = json.loads((tmp_path / "b.manifest.json").read_text())["accounting"]
    assert second["sent"]["answers"] == 0 and second["sent"]["requests"] == 0 and second["cost_usd"] == 0
    assert second["cached"]["answers"] == 20
    assert second["cached"]["prompt_tokens"] == first["sent"]["prompt_tokens"] > 0


def test_a_mid_run_model_change_is_flagged(tmp_path, chat_server, capsys):
    release = write_release(tmp_path / "rel")
    server = chat_server(UsageServer(switch_at=12))
    out = tmp_path / "p.jsonl"
    assert _run(release.root, server, out, "--concurrency", "1", "--no_cache") == 0
    man = json.loads((tmp_path / "p.manifest.json").read_text())
    assert man["server"] == {"models": ["model-a-2024", "model-b-2025"], "fingerprints": ["fp_aaa", "fp_bbb"],
                             "changed": True}
    err = capsys.readouterr().err
    assert "warning: the server changed midway (model name model-a-2024 -> model-b-2025; " \
           "system_fingerprint fp_aaa -> fp_bbb)" in err
    assert sum(r["response_model"] == "model-b-2025" for r in _rows(out)) == 8


def test_a_server_sending_no_extras_writes_the_rows_as_before(tmp_path, chat_server):
    release = write_release(tmp_path / "rel")
    server = chat_server(lambda i, body, headers: _bare())
    out = tmp_path / "p.jsonl"
    assert _run(release.root, server, out, "--no_cache") == 0
    rows = _rows(out)
    assert all(set(r) == BASE_KEYS and set(r["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
               for r in rows)
    man = json.loads((tmp_path / "p.manifest.json").read_text())
    assert man["server"] == {"models": [], "fingerprints": [], "changed": False}
    assert man["accounting"]["cost_usd"] is None and man["accounting"]["sent"]["prompt_tokens"] == 11 * 20


def _bare():
    status, extra, reply, delay = ok_reply("COUNT(1)")
    del reply["model"]
    return status, extra, reply, delay


def test_extra_fields_leave_the_evaluator_outputs_byte_identical(tmp_path, chat_server, mini_release):
    server = chat_server(UsageServer(switch_at=5))
    full = tmp_path / "full.jsonl"
    assert _run(mini_release, server, full, "--no_cache", "--concurrency", "4",
                "--price_in", "2", "--price_out", "8") == 0
    assert {"response_model", "system_fingerprint", "reasoning"} <= set(_rows(full)[0])
    stripped = tmp_path / "stripped.jsonl"
    stripped.write_text("".join(json.dumps({k: r[k] for k in ("item_id", "model", "raw_text", "error",
                                                              "finish_reason")}) + "\n" for r in _rows(full)))
    outs = []
    for name, preds in (("a", full), ("b", stripped)):
        outs.append(tmp_path / f"eval_{name}")
        assert eval_main(["--predictions", str(preds), "--dataset_root", str(mini_release), "--split", "test",
                          "--out_dir", str(outs[-1]), "--no_analyses", "--n_boot", "50"]) == 0
    files_a = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    assert files_a == files_b and files_a
    # provenance.json names the predictions file, its hash and its run manifest: it must differ
    assert Path("provenance.json") in files_a and len(files_a) == 9
    differing = [str(f) for f in files_a if f.name != "provenance.json"
                 and (outs[0] / f).read_bytes() != (outs[1] / f).read_bytes()]
    assert differing == ["evaluation_summary.json"]  # only by the predictions path it records
    summaries = [json.loads((out / "evaluation_summary.json").read_text()) for out in outs]
    for summary in summaries:
        summary.pop("predictions_jsonl")
    assert summaries[0] == summaries[1]
    # the report's Inputs section shows who answered (flagged: it changed) and the accounting
    report = tmp_path / "r.html"
    assert eval_main(["report", str(outs[0]), str(outs[1]), "--out", str(report), "--gallery", "0",
                      "--n_boot", "50"]) == 0
    inputs = re.search(r'<section id="inputs">(.*?)</section>', report.read_text(encoding="utf-8"), re.S)
    assert inputs
    text = html.unescape(re.sub(r"<[^>]+>", "", inputs.group(1)))
    acc = json.loads((tmp_path / "full.manifest.json").read_text())["accounting"]
    assert "The server changed midway: model name(s) model-a-2024, model-b-2025; " \
           "system_fingerprint(s) fp_aaa, fp_bbb" in text
    assert (f"Sent: 50 answers in 50 requests, {acc['sent']['prompt_tokens']:,} prompt + "
            f"{acc['sent']['completion_tokens']:,} completion tokens ({acc['sent']['reasoning_tokens']:,} reasoning); "
            f"cost ${acc['cost_usd']:,.4f} at $2 / $8 per million in / out") in text
    assert text.count("Sent:") == 1  # the stripped run has no manifest: no accounting line


def test_one_price_without_the_other_is_one_line(tmp_path, chat_server, capsys):
    release = write_release(tmp_path / "rel")
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(1)"))
    assert _run(release.root, server, tmp_path / "p.jsonl", "--price_in", "3") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--price_in and --price_out go together" in err[0]
    assert server.count == 0


def test_dry_run_estimates_what_the_real_run_then_sends(tmp_path, chat_server, capsys):
    from PIL import Image

    from rose_eval.runners.rate_limit import image_tokens

    release = write_release(tmp_path / "rel")
    server = chat_server(UsageServer())
    out = tmp_path / "p.jsonl"
    prices = ("--price_in", "2.5", "--price_out", "10")
    assert _run(release.root, server, out, "--dry_run", *prices) == 0
    assert server.count == 0 and not out.exists()
    stdout = capsys.readouterr().out.strip().splitlines()
    assert len(stdout) == 1
    found = re.fullmatch(r"rose-run: estimate: (\d+) requests, ([\d.]+) MB of images; prompt ~([\d,]+) tokens at "
                         r"OpenAI's high-detail image rule \(~([\d,]+) at low detail\); cost ~\$([\d.,]+) for the "
                         r"prompts, at most \$([\d.,]+) with every answer at max_tokens; nothing sent", stdout[0])
    assert found, stdout[0]
    requests, mb = int(found[1]), float(found[2])
    high, low = (int(found[i].replace(",", "")) for i in (3, 4))
    assert float(found[5]) == round(high * 2.5 / 1e6, 2)
    assert float(found[6]) == round((high * 2.5 + 20 * 256 * 10) / 1e6, 2)
    # the real run: what the server receives is what the estimate counted
    assert _run(release.root, server, out, "--no_cache") == 0
    assert requests == server.count == 20
    sent_urls = [part["image_url"]["url"] for body in server.requests for part in body["messages"][0]["content"]
                 if part["type"] == "image_url"]
    assert mb == round(sum(len(u) for u in sent_urls) / 1e6, 1)
    sizes = [Image.open(release.root / r["image"]).size for r in release.rows]
    assert high - low == sum(image_tokens(w, h) - 85 for w, h in sizes) > 0


def test_rows_without_attempts_or_wall_say_so():
    """A harness's converted rows record no attempts and no wall time: the line says so, it does not print 0."""
    from rose_eval.runners.accounting import Prices, accounting, accounting_line

    rows = [{"item_id": "a", "raw_text": "DONE", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}]
    block = accounting(rows, Prices(), None)
    assert block["sent"]["requests"] is None and block["wall_s"] is None
    line = accounting_line({"accounting": block})
    assert "requests not recorded" in line and "5 prompt + 2 completion tokens" in line and "wall" not in line
    assert accounting([{**rows[0], "attempts": 2}], Prices(), 1.5)["sent"]["requests"] == 2


def test_manifest_notes_fold_a_one_shot_stream_as_they_fold_a_list():
    """rose-run sums its output file in one streaming pass: a generator (consumed once,
    never listed) gives the same blocks as the rows held in a list, cached and sent apart."""
    from rose_eval.runners.accounting import Prices, manifest_notes

    rows = [{"item_id": f"i{k}", "raw_text": "DONE", "attempts": 1 + k % 2, "cached": k % 3 == 0,
             "usage": {"prompt_tokens": 10 + k, "completion_tokens": k},
             "response_model": "m-a" if k < 7 else "m-b", "system_fingerprint": "fp"}
            for k in range(10)]
    consumed: list[int] = []

    def stream():
        for k, row in enumerate(rows):
            consumed.append(k)
            yield row

    streamed = manifest_notes(stream(), Prices(1.0, 2.0), 3.0)
    assert consumed == list(range(10))
    assert streamed == manifest_notes(list(rows), Prices(1.0, 2.0), 3.0)
    sent = [r for r in rows if not r["cached"]]
    assert streamed["accounting"]["sent"]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in sent)
    assert streamed["accounting"]["sent"]["requests"] == sum(r["attempts"] for r in sent)
    assert streamed["accounting"]["cached"]["answers"] == 4
    assert streamed["server"] == {"models": ["m-a", "m-b"], "fingerprints": ["fp"], "changed": True}

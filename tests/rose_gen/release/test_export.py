"""The release on disk: layout, rows read back every way, summary hashes, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from rose_eval.vocab import SPLITS, TEMPLATE_ORDER
from rose_gen.release.config import load_config
from rose_gen.release.export import ExportSettings, ReleaseInfo, ReleaseWriter
from rose_gen.release.features import SchemaError, drop_nulls, row_columns
from rose_gen.release.folder import SUMMARY_FILE, ReleaseError, release_files, sha256_path
from rose_gen.release.pipeline import generate_release, plan_release, scene_rows
from tests.fixtures.latin_source import latin_overrides


def _config(out: Path, *extra: str):
    return load_config([f"output_dir={out}", "progress=false", *latin_overrides(), *extra])


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("export") / "release"
    config = _config(out)
    result = generate_release(config)
    assert result.written and result.path == out.absolute()
    expected: dict[str, list] = {s: [] for s in SPLITS}
    bridges: dict[str, dict[str, list]] = {}
    for scene in plan_release(config):
        rows = scene_rows(scene)
        expected[scene.split] += rows.main
        for template, brows in rows.bridges.items():
            bridges.setdefault(template, {s: [] for s in SPLITS})[scene.split] += brows
    return out, {"main": expected, "bridges": bridges}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_layout_and_jsonl_rows_are_exactly_the_built_rows(release) -> None:
    out, expected = release
    for split in SPLITS:
        assert _jsonl(out / f"metadata_{split}.jsonl") == expected["main"][split]
        assert _jsonl(out / "analysis/global_click" / f"metadata_{split}.jsonl") == \
            expected["bridges"]["T1B_CLICK_GLOBAL"][split]
        assert _jsonl(out / "analysis/matched_local_count" / f"metadata_{split}.jsonl") == \
            expected["bridges"]["T2B_COUNT_LOCAL_MATCHED"][split]
    assert len(expected["main"]["dev"]) == 5 * 5 and len(expected["main"]["test"]) == 5 * 2 * 5
    for name in ("README.md", "LICENSES.md", SUMMARY_FILE, "data/dev.parquet", "data/test.parquet"):
        assert (out / name).is_file(), name
    # No temporary sibling left behind.
    assert [p.name for p in out.parent.iterdir()] == ["release"]


def test_images_exist_once_with_the_row_sizes(release) -> None:
    out, expected = release
    rows = expected["main"]["dev"] + expected["main"]["test"]
    paths = {r["image"] for r in rows}
    on_disk = {p.relative_to(out).as_posix() for p in (out / "images").rglob("*.png")}
    assert paths == on_disk and len(on_disk) == 2 * 15
    for row in rows:
        assert row["image"] == f"images/{row['rose_subset']}/{row['image_id']}.png"
        with Image.open(out / row["image"]) as im:
            assert im.size == (row["image_width"], row["image_height"]) == \
                (row["cols"] * row["cell_size"], row["rows"] * row["cell_size"])


def test_parquet_rows_equal_jsonl_rows_with_embedded_images(release) -> None:
    out, expected = release
    for split in SPLITS:
        table = pq.read_table(out / "data" / f"{split}.parquet")
        assert b"huggingface" in table.schema.metadata
        got = table.to_pylist()
        assert len(got) == len(expected["main"][split])
        for row, want in zip(got, expected["main"][split], strict=True):
            image = row.pop("image")
            assert image["path"] == want["image"]
            assert image["bytes"] == (out / want["image"]).read_bytes()
            assert drop_nulls(row) == drop_nulls({k: v for k, v in want.items() if k != "image"})


def test_datasets_loads_the_card_and_the_parquet(release, tmp_path, monkeypatch) -> None:
    import datasets  # a test dependency: the Hugging Face loader must read the release
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out, expected = release
    cache = str(tmp_path / "cache")
    card = datasets.load_dataset(str(out), cache_dir=cache)
    assert sorted(card) == ["dev", "test"]
    for split in SPLITS:
        assert [drop_nulls(r) for r in card[split]] == [drop_nulls(r) for r in expected["main"][split]]
    assert card["test"].features["region_params"]["exclude_params"]["r1"].dtype == "int64"
    files = {s: str(out / "data" / f"{s}.parquet") for s in SPLITS}
    par = datasets.load_dataset("parquet", data_files=files, cache_dir=cache)
    row = par["dev"][0]
    assert isinstance(row["image"], Image.Image)
    assert row["image"].size == (row["image_width"], row["image_height"])


def test_summary_hashes_every_file_and_records_config_and_versions(release) -> None:
    out, _ = release
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    assert sorted(summary["files"]) == release_files(out)
    for rel, digest in summary["files"].items():
        assert sha256_path(out / rel) == digest, rel
    assert summary["config"]["profile_name"] == "mini"
    assert not {"output_dir", "workers", "overwrite", "progress"} & set(summary["config"])
    assert summary["versions"]["pillow"] and summary["assets"]["latin_test"]
    counts = summary["counts"]
    assert counts["rows"] == {"dev": 25, "test": 50}
    assert counts["tasks"]["ROSE-ChineseGlyph"]["test"] == {t: 2 for t in TEMPLATE_ORDER}
    text = json.dumps(summary)
    assert str(out) not in text and str(out.parent) not in text
    assert "DejaVu" in (out / "LICENSES.md").read_text(encoding="utf-8")


def test_refuses_a_different_release_keeps_an_identical_one_and_overwrites_on_request(release, tmp_path) -> None:
    out = tmp_path / "rel"
    generate_release(_config(out))
    before = {rel: (out / rel).read_bytes() for rel in release_files(out)}
    again = generate_release(_config(out))
    assert not again.written
    with pytest.raises(ReleaseError, match="different config.*overwrite=true"):
        generate_release(_config(out, "seed=5"))
    assert {rel: (out / rel).read_bytes() for rel in release_files(out)} == before
    generate_release(_config(out, "seed=5", "overwrite=true"))
    assert json.loads((out / SUMMARY_FILE).read_text())["config"]["seed"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]


def test_refuses_a_non_release_directory(tmp_path) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError, match="holds no ROSE release"):
        generate_release(_config(out))
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_failure_mid_write_leaves_nothing(tmp_path) -> None:
    out = tmp_path / "rel"
    with pytest.raises(RuntimeError, match="boom"), ReleaseWriter(out, ExportSettings()) as writer:
        writer.commit  # noqa: B018 - the writer is live here
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with ReleaseWriter(out, ExportSettings()) as writer:
        path, written = writer.commit(ReleaseInfo(config={}, versions={}))
    assert written and (path / SUMMARY_FILE).is_file()


def test_conflicting_field_types_are_refused() -> None:
    with pytest.raises(SchemaError, match="'extra' mixes string and int64"):
        row_columns([{"extra": "a"}, {"extra": 3}])
    cols = dict(row_columns([{"extra": 1}, {"extra": 2.5}, {"tags": []}, {"tags": ["x"]}]))
    assert cols["extra"] == "float64" and cols["tags"] == ("list", "string")


def test_parquet_and_bridges_can_be_switched_off(tmp_path) -> None:
    out = tmp_path / "rel"
    generate_release(_config(out, "export.parquet=false", "export.bridges=false", "subsets=[glyph]"))
    names = sorted(p.name for p in out.iterdir())
    assert names == ["LICENSES.md", "README.md", "export_summary.json", "images", "metadata_dev.jsonl",
                     "metadata_test.jsonl"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "data/dev.parquet" not in card and "analysis/" not in card


def test_add_file_lands_in_the_release_and_its_summary(tmp_path) -> None:
    out = tmp_path / "rel"
    with ReleaseWriter(out, ExportSettings(parquet=False)) as writer:
        writer.add_file("extra/report.json", b'{"ok": true}\n')
        for bad in ("/abs.json", "../escape.json", "a/../../b.json", "dir\\file.json", ""):
            with pytest.raises(ReleaseError, match="stay inside the release"):
                writer.add_file(bad, b"x")
        path, written = writer.commit(ReleaseInfo(config={}, versions={}))
    assert written and (path / "extra" / "report.json").read_bytes() == b'{"ok": true}\n'
    summary = json.loads((path / SUMMARY_FILE).read_text(encoding="utf-8"))
    assert summary["files"]["extra/report.json"] == sha256_path(path / "extra" / "report.json")
    assert not (tmp_path / "escape.json").exists() and not (tmp_path.parent / "b.json").exists()


def test_rows_per_file_caps_large_splits_only() -> None:
    settings = ExportSettings(parquet_max_rows_per_file=100)
    assert settings.rows_per_file([40, 100]) == 0  # v0.1-sized: one data/<split>.parquet
    assert settings.rows_per_file([40, 101]) == 100  # past the cap: every split in files of 100 rows
    assert ExportSettings(parquet_rows_per_file=7, parquet_max_rows_per_file=100).rows_per_file([5, 5]) == 7
    assert ExportSettings(parquet_max_rows_per_file=0).rows_per_file([10**6, 10**6]) == 0  # no cap


def test_a_split_past_the_cap_is_written_as_the_same_files_as_asked_for(release, tmp_path) -> None:
    """The cap writes exactly the Hugging Face-style files ``parquet_rows_per_file`` would (card too)."""
    out, expected = release
    n_test = len(expected["main"]["test"])
    capped = generate_release(_config(tmp_path / "capped", f"export.parquet_max_rows_per_file={n_test - 1}")).path
    asked = generate_release(_config(tmp_path / "asked", f"export.parquet_rows_per_file={n_test - 1}")).path
    files = sorted(p.name for p in (capped / "data").iterdir())
    assert files == sorted(p.name for p in (asked / "data").iterdir())
    assert files == ["dev-00000-of-00001.parquet", "test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    for name in files:
        assert (capped / "data" / name).read_bytes() == (asked / "data" / name).read_bytes()
    assert (capped / "README.md").read_text() == (asked / "README.md").read_text()
    rows = [r for name in files if name.startswith("test") for r in pq.read_table(capped / "data" / name).to_pylist()]
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in expected["main"]["test"]]
    assert sorted(p.name for p in (out / "data").iterdir()) == ["dev.parquet", "test.parquet"]  # under the cap


@pytest.mark.parametrize("every", [0, 1, 3, 7, 100])
def test_rows_appended_from_part_files_equal_rows_written_one_by_one(tmp_path, monkeypatch, every) -> None:
    """The merge's worker processes write a subset's rows apart; appended in order they give the same
    bytes, hash and Parquet file offsets as writing every row here (tiny read blocks: a line crosses them)."""
    import random

    from rose_gen.release import folder
    from rose_gen.release.export import _JsonlSink

    real = folder.line_starts
    monkeypatch.setattr("rose_gen.release.export.line_starts", lambda fh, lines: real(fh, lines, block_size=5))
    rng = random.Random(every)
    for trial in range(40):
        rows = [{"k": i, "s": "é" * rng.randint(0, 12)} for i in range(rng.randint(0, 40))]
        one = _JsonlSink(tmp_path / "one.jsonl", every)
        for row in rows:
            one.write(row)
        one.close()
        cuts = sorted(rng.sample(range(len(rows) + 1), rng.randint(0, min(len(rows) + 1, 5))))
        bounds = [0, *cuts, len(rows)]
        joined = _JsonlSink(tmp_path / "joined.jsonl", every)
        for a, b in zip(bounds, bounds[1:], strict=False):
            part = _JsonlSink(tmp_path / "part.jsonl")
            for row in rows[a:b]:
                part.write(row)
            part.close()
            joined.append_file(part.path, b - a)
        joined.close()
        assert joined.path.read_bytes() == one.path.read_bytes(), trial
        assert (joined.digest.hexdigest(), joined.rows, joined.size, joined.offsets) == (
            one.digest.hexdigest(), one.rows, one.size, one.offsets), (trial, bounds)

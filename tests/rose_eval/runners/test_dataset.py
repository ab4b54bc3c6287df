"""Release loading: selection, fingerprint, path-escape refusal, missing images."""

from __future__ import annotations

import hashlib
import json

import pytest

from rose_eval.cli.run import main
from rose_eval.runners.dataset import DatasetError, Selection, load_split


def _rewrite(release, edit) -> None:
    rows = [dict(r) for r in release.rows]
    edit(rows)
    (release.root / "metadata_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_load_all_rows_with_fingerprint(release):
    loaded = load_split(release.root, "test")
    assert [i.item_id for i in loaded.items] == [r["item_id"] for r in release.rows]
    metadata = release.root / "metadata_test.jsonl"
    assert loaded.fingerprint == hashlib.sha256(metadata.read_bytes()).hexdigest()
    assert all(i.image_path.is_file() and i.image_path.is_relative_to(release.root) for i in loaded.items)


def test_filters_and_seeded_per_subset_sampling(release):
    sel = Selection(subsets=("pixeledit",), templates=("T3", "T5_CLICK_EXCLUSION_SUBMIT"))
    items = load_split(release.root, "test", sel).items
    assert {i.row["rose_subset"] for i in items} == {"ROSE-PixelEdit"}
    assert {i.row["task_template"] for i in items} == {"T3_CLICK_LOCAL_NUMERIC", "T5_CLICK_COUNT_EXCLUSION"}
    picked = Selection(samples_per_subset=3, shuffle=True, seed=7)
    a = [i.item_id for i in load_split(release.root, "test", picked).items]
    b = [i.item_id for i in load_split(release.root, "test", picked).items]
    c = [i.item_id for i in load_split(release.root, "test", Selection(samples_per_subset=3, shuffle=True,
                                                                        seed=8)).items]
    assert a == b and len(a) == 6 and a != c
    assert [x[:2] for x in a] == ["CH"] * 3 + ["PE"] * 3
    with pytest.raises(DatasetError, match="unknown subset"):
        load_split(release.root, "test", Selection(subsets=("Nope",)))
    with pytest.raises(DatasetError, match="unknown template"):
        load_split(release.root, "test", Selection(templates=("T9",)))


@pytest.mark.parametrize("bad_path", ["../outside.png", "images/../../outside.png", "/etc/passwd"])
def test_image_path_outside_root_is_refused(release, bad_path, capsys, tmp_path):
    (release.root.parent / "outside.png").write_bytes(b"not an image")
    _rewrite(release, lambda rows: rows[3].update(image=bad_path))
    out = tmp_path / "p.jsonl"
    code = main(["--dataset_root", str(release.root), "--split", "test", "--solver", "oracle", "--output", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "outside the dataset root" in err
    assert "metadata_test.jsonl:4" in err and "Traceback" not in err
    assert not out.exists()  # no half-written output


def test_symlink_escape_is_refused(release, tmp_path):
    target = tmp_path / "secret.png"
    target.write_bytes(b"x")
    (release.root / "images" / "link.png").symlink_to(target)
    _rewrite(release, lambda rows: rows[0].update(image="images/link.png"))
    with pytest.raises(DatasetError, match="outside the dataset root"):
        load_split(release.root, "test")


def test_missing_image_is_one_clear_line(release, capsys, tmp_path):
    missing = release.rows[5]["image"]
    (release.root / missing).unlink()
    code = main(["--dataset_root", str(release.root), "--solver", "cv", "--output", str(tmp_path / "p.jsonl")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"missing image {missing}" in err


def test_missing_metadata_and_bad_json(release, tmp_path, capsys):
    assert main(["--dataset_root", str(release.root), "--split", "dev", "--solver", "oracle",
                 "--output", str(tmp_path / "p.jsonl")]) == 2
    assert "metadata_dev.jsonl" in capsys.readouterr().err
    with (release.root / "metadata_test.jsonl").open("a") as handle:
        handle.write("{oops\n")
    with pytest.raises(DatasetError, match=r"metadata_test.jsonl:21: invalid JSON"):
        load_split(release.root, "test")

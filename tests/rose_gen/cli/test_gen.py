"""rose-gen: Hydra composition without side effects, one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rose_gen.cli.gen import main
from rose_gen.release.config import compose_config, load_config
from rose_gen.scene.v0_1_plans import V0_1_PLANS
from tests.fixtures.latin_source import latin_overrides

REPO = Path(__file__).resolve().parents[3]


def test_v0_1_profile_composes_to_the_v0_1_plans() -> None:
    config = load_config(["profile=v0_1"])
    assert {p.subset: p for p in config.plans} == V0_1_PLANS
    assert sum(p.n_scenes for p in config.plans) == 1512 and sum(p.n_dev for p in config.plans) == 400


def test_mini_profile_and_subset_selection() -> None:
    config = load_config(["subsets=[pixel_edit,ROSE-ChineseGlyph]"])
    assert [p.subset for p in config.plans] == ["ROSE-ChineseGlyph", "ROSE-PixelEdit"]
    assert all((p.n_scenes, p.n_dev) == (6, 2) for p in config.plans)
    assert load_config(["render=mask"]).plans[0].cue_type == "MASK"


def test_generates_a_release_without_hydra_side_effects(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["output_dir=rel", "progress=false", *latin_overrides(scenes=2), "subsets=[glyph]"])
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]
    summary = json.loads((tmp_path / "rel" / "export_summary.json").read_text())
    assert summary["config"]["subsets"] == ["glyph"]
    assert "wrote" in capsys.readouterr().err


BAD = [
    (["bogus=1"], "unknown config key 'bogus'"),
    (["+bogus=1"], "bogus"),
    (["seed=abc"], "seed"),
    (["seed=-1"], "seed must be a non-negative"),
    (["workers=0"], "workers must be at least 1"),
    (["profile=huge"], "unknown profile 'huge'; known: "
     + ", ".join(sorted(p.stem for p in (Path(__file__).parents[3] / "conf" / "profile").glob("*.yaml")))),
    (["subset.glyph.scenez=3"], "unknown config key 'subset.glyph.scenez'"),
    (["subsets=[nope]"], "unknown subset 'nope'"),
    (["render.png_compress_level=12"], "png_compress_level must be 0..9"),
    (["render.cue_type=GLOW"], "cue_type 'GLOW' must be one of"),
    (["subset.glyph.dev_scenes=99"], "n_dev=99"),
    (["subset.glyph.layout.exception_weights=[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
      "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]"], "exceptions leave no majority"),
    (["subset.glyph.region_sizes.rect_max=12"], "larger than the smallest"),
    (["subset.glyph.source=nosuch"], "unknown visual source 'nosuch'"),
    (["seed=[1"], "no viable alternative"),
    (["plugins=[no.such.module]"], "plugins: cannot import 'no.such.module'"),
    (["difficulty=nope"], "unknown difficulty 'nope'"),
    (["subset.glyph.layout.cell_size=[1]"], "cell_size must be [min, max]"),
    (["--verbose"], "unknown option --verbose"),
    (["+subset.glyph.source_options.font_poool=pip"],
     "subset.glyph.source_options: unknown key(s) font_poool for source 'glyph'; known: faces, font_pool"),
    (["+subset.pixel_edit.source_options.sprite=[crawl]"],
     "subset.pixel_edit.source_options: unknown key(s) sprite for source 'pixel_edit'"),
    (["+subset.emoji_style.source_options.vendor=[noto]"], "subset.emoji_style.source_options: unknown key(s) vendor"),
]


@pytest.mark.parametrize(("overrides", "message"), BAD, ids=[b[1][:30] for b in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, capsys, overrides, message) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["output_dir=rel", "progress=false", *overrides])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("rose-gen: error: ")
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_missing_output_dir_is_a_usage_error(capsys) -> None:
    assert main(["progress=false"]) == 2
    assert "output_dir is required" in capsys.readouterr().err


def test_cfg_and_help_print_and_exit_0(capsys) -> None:
    assert main(["--cfg", "seed=3"]) == 0
    out = capsys.readouterr().out
    assert "seed: 3" in out and "profile_name: mini" in out
    assert main(["--help"]) == 0
    assert "profile=<mini|v0_1>" in capsys.readouterr().out


def test_console_entry_exit_status_and_single_stderr_line(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rose_gen.cli.gen", "bogus=1", f"output_dir={tmp_path / 'r'}"],
                          cwd=tmp_path, capture_output=True, text=True, env=None, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["rose-gen: error: unknown config key 'bogus'; "
                                                "see `rose-gen --cfg` for the known keys"]
    assert list(tmp_path.iterdir()) == []


def test_compose_has_no_output_folder_side_effects(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    compose_config(["seed=1"])
    assert list(tmp_path.iterdir()) == []
    assert not (REPO / "outputs").exists()

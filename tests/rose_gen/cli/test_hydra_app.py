"""rose-gen -m: shards on Hydra's launchers (joblib, submitit), the merge callback, launcher configs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from rose_gen.cli.gen import main
from rose_gen.cli.hydra_app import FAILED_FILE, sweep_jobs
from rose_gen.release.config import CONF_DIR, load_config
from rose_gen.release.folder import SUMMARY_FILE, release_files
from rose_gen.release.pipeline import generate_release
from rose_gen.release.shards import shard_name
from tests.fixtures.latin_source import latin_overrides

REPO = Path(__file__).resolve().parents[3]
SMALL = [*latin_overrides(scenes=3, dev=1), "progress=false"]


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in [*release_files(root), SUMMARY_FILE]}


def _rose_gen(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the jobs import the test source plug-in
    return subprocess.run([sys.executable, "-m", "rose_gen.cli.gen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("single") / "rel"
    return generate_release(load_config([f"output_dir={out}", "workers=1", *SMALL])).path


def test_three_shards_on_joblib_merge_byte_identical_to_one_process(single, tmp_path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    blocked = work / "rel.shards" / shard_name(1, 3)
    blocked.mkdir(parents=True)
    (blocked / "notes.txt").write_text("mine")
    sweep = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "shard.index=range(0,3)", "shard.count=3",
             "output_dir=rel", *SMALL]
    failed = _rose_gen(work, *sweep)  # shard 1's folder is taken: that job fails, nothing is merged
    assert failed.returncode == 1
    errors = [line for line in failed.stderr.splitlines() if "error" in line]
    assert len(errors) == 2 and "shard 1: shard folder" in errors[0] and "1 of 3 shards failed" in errors[1]
    assert "Traceback" not in failed.stderr and "HYDRA_FULL_ERROR" not in failed.stderr
    assert not (work / "rel").exists() and (blocked / FAILED_FILE).is_file()
    assert (work / "rel.shards" / shard_name(0, 3) / "shard_summary.json").is_file()

    (blocked / "notes.txt").unlink()
    done = _rose_gen(work, *sweep)  # resume: shards 0 and 2 are kept, shard 1 is made, then the merge
    assert done.returncode == 0, done.stderr
    for index in (0, 2):
        assert f"kept the finished {work / 'rel.shards' / shard_name(index, 3)}" in done.stderr
    assert f"wrote {work / 'rel.shards' / shard_name(1, 3)}" in done.stderr
    assert "(15 scenes from 3 shards)" in done.stderr
    assert _tree(work / "rel") == _tree(single)
    assert sorted(p.name for p in work.iterdir()) == ["rel"]  # no multirun/, outputs/ or shard folders left


def test_submitit_local_launcher_runs_the_shards_then_merges(single, tmp_path) -> None:
    done = _rose_gen(tmp_path, "-m", "hydra/launcher=submitit_local", "shard.index=range(0,2)", "shard.count=2",
                     "output_dir=rel", "shard.keep=true", *SMALL)
    assert done.returncode == 0, done.stderr
    assert _tree(tmp_path / "rel") == _tree(single)
    kept = sorted(p.name for p in (tmp_path / "rel.shards").iterdir())
    assert kept == [".submitit", "multirun.yaml", "shard-0-of-2", "shard-1-of-2"]


def _job_config(launcher: str, index: int, count: int) -> object:
    overrides = [f"hydra/launcher={launcher}", f"shard.index=range(0,{count})", f"shard.count={count}",
                 "output_dir=/shared/rose/big", "profile=v0_1"]
    indices, rest = sweep_jobs(overrides)
    assert indices == list(range(count))
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        return compose("config", overrides=[*rest, f"shard.index={index}"], return_hydra_config=True)


@pytest.mark.parametrize(("launcher", "target"), [
    ("rose_slurm", "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"),
    ("rose_ray", "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher"),
])
def test_cluster_launcher_configs_compose_and_name_the_shard_jobs(launcher, target) -> None:
    for index in (0, 63):
        cfg = _job_config(launcher, index, 64)
        assert cfg.hydra.launcher._target_ == target
        assert cfg.hydra.job.name == "rose-gen"
        # Each job's Hydra folder is exactly its shard folder, under the folder the merge reads.
        assert Path(cfg.hydra.sweep.dir) == Path("/shared/rose/big.shards")
        assert cfg.hydra.sweep.subdir == shard_name(index, 64) == f"shard-{index}-of-64"
        assert cfg.hydra.output_subdir is None and "file" not in cfg.hydra.job_logging.get("handlers", {})
        assert cfg.hydra.callbacks.merge_shards._target_ == "rose_gen.cli.hydra_app.MergeShards"
    if launcher == "rose_slurm":  # the submitit plug-in is in the dev set: build the real launcher object
        params = instantiate(cfg.hydra.launcher).params
        assert params["name"] == "rose-gen" and params["cpus_per_task"] == 1
        assert params["submitit_folder"] == "/shared/rose/big.shards/.submitit/%j"
    else:
        assert cfg.hydra.launcher.ray.init.address is None and cfg.hydra.launcher.ray.remote.num_cpus == 1


BAD_SWEEPS = [
    (["seed=1,2", "shard.index=range(0,2)", "shard.count=2"], "sweeps shard.index only (got 'seed=1,2')"),
    (["shard.count=2"], "add 'shard.index=range(0,N)' shard.count=N"),
    (["shard.index=range(0,3)", "shard.count=2"], "shard.index 2 is outside 0..1"),
    (["shard.index=0,0", "shard.count=2"], "names a shard twice"),
    (["shard.index=range(0,", "shard.count=2"], "cannot parse override 'shard.index=range(0,'"),
    (["hydra/launcher=nope", "shard.index=range(0,2)", "shard.count=2"], "Hydra launcher 'nope' is not installed"),
    (["bogus=1", "shard.index=range(0,2)", "shard.count=2"], "unknown config key 'bogus'"),
]


@pytest.mark.parametrize(("args", "message"), BAD_SWEEPS)
def test_bad_sweeps_fail_before_launching_with_one_line(args, message, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "output_dir=rel", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-gen: error: ") and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_shard_run_without_an_index_says_how_to_sweep(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["output_dir=rel", "shard.count=4"]) == 2
    assert "shard.count=4 needs shard.index=0..3, or run every shard: rose-gen -m" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []

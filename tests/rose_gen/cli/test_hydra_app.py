"""rose-gen -m: shards on Hydra's launchers (joblib, submitit), the merge callback, launcher configs."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from rose_gen.cli.gen import main
from rose_gen.cli.hydra_app import FAILED_FILE, absolute_paths, sweep_jobs
from rose_gen.cli.launchers import shard_mem_gb
from rose_gen.release.config import CONF_DIR, load_config
from rose_gen.release.folder import SUMMARY_FILE, release_files
from rose_gen.release.pipeline import generate_release
from rose_gen.release.shards import KILL_SHARD_ENV, shard_name
from tests.fixtures.latin_source import latin_overrides

REPO = Path(__file__).resolve().parents[3]
SMALL = [*latin_overrides(scenes=3, dev=1), "progress=false"]


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in [*release_files(root), SUMMARY_FILE]}


def _rose_gen(cwd: Path, *args: str, timeout: float = 600, **env_vars: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), **env_vars}  # the jobs import the test source plug-in
    return subprocess.run([sys.executable, "-m", "rose_gen.cli.gen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("single") / "rel"
    return generate_release(load_config([f"output_dir={out}", "workers=1", *SMALL])).path


@pytest.mark.slow
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
    # Resume: shards 0 and 2 are kept, shard 1 is made, then the merge. Shard 1 renders with two
    # processes of its own inside a loky worker, whose start method its children cannot load:
    # that hung (pools restarting their workers forever) until the pools set a standard one.
    done = _rose_gen(work, *sweep, "workers=2", timeout=120)
    assert done.returncode == 0, done.stderr
    for index in (0, 2):
        assert f"kept the finished {work / 'rel.shards' / shard_name(index, 3)}" in done.stderr
    assert f"wrote {work / 'rel.shards' / shard_name(1, 3)}" in done.stderr
    assert "(15 scenes from 3 shards)" in done.stderr
    assert _tree(work / "rel") == _tree(single)
    assert sorted(p.name for p in work.iterdir()) == ["rel"]  # no multirun/, outputs/ or shard folders left


@pytest.mark.slow
def test_submitit_local_launcher_runs_the_shards_then_merges(single, tmp_path) -> None:
    done = _rose_gen(tmp_path, "-m", "hydra/launcher=submitit_local", "shard.index=range(0,2)", "shard.count=2",
                     "output_dir=rel", "shard.keep=true", *SMALL)
    assert done.returncode == 0, done.stderr
    for index in (0, 1):  # the jobs' lines, kept by submitit in files, reach the launching terminal
        assert f"rose-gen: wrote {tmp_path / 'rel.shards' / shard_name(index, 2)} (" in done.stderr
    assert _tree(tmp_path / "rel") == _tree(single)
    kept = sorted(p.name for p in (tmp_path / "rel.shards").iterdir())
    assert kept == [".submitit", "multirun.yaml", "shard-0-of-2", "shard-1-of-2"]


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("rose-gen: error: ")]


def _leftovers(shards: Path) -> list[str]:
    return sorted(p.name for p in shards.glob(".*")) if shards.is_dir() else []


@pytest.mark.slow
def test_a_killed_shard_ends_in_one_line_each_and_the_rerun_makes_it_identical(single, tmp_path) -> None:
    sweep = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "shard.index=range(0,3)", "shard.count=3",
             "output_dir=rel", *SMALL]
    killed = _rose_gen(tmp_path, *sweep, **{KILL_SHARD_ENV: "1"})  # shard 1 SIGKILLs itself after one scene
    assert killed.returncode == 1, killed.stderr
    assert "Traceback" not in killed.stderr and "HYDRA_FULL_ERROR" not in killed.stderr
    errors = _errors(killed.stderr)
    shard_1 = [line for line in errors if line.startswith("rose-gen: error: shard 1: stopped while running (pid ")]
    assert len(shard_1) == 1 and "TerminatedWorkerError" in shard_1[0], killed.stderr
    pid = int(shard_1[0].split("(pid ")[1].split()[0])
    with pytest.raises(ProcessLookupError):  # the line names the process that was killed
        os.kill(pid, 0)
    unfinished = [line for line in errors if line.startswith("rose-gen: error: shard ")]
    assert errors[-1].startswith(f"rose-gen: error: {len(unfinished)} of 3 shards did not finish; nothing merged")
    assert len(errors) == len(unfinished) + 1
    shards = tmp_path / "rel.shards"
    assert _leftovers(shards) == []  # the killed writer's partial folder and the running markers are gone
    assert not (tmp_path / "rel").exists()

    # A partial folder left by a run whose launching process died too is removed by the next run.
    (shards / f".{shard_name(1, 3)}.partial-abc").mkdir(parents=True)
    done = _rose_gen(tmp_path, *sweep)
    assert done.returncode == 0, done.stderr
    assert _tree(tmp_path / "rel") == _tree(single)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]


@pytest.mark.slow
def test_a_killed_submitit_job_names_its_log(tmp_path) -> None:
    killed = _rose_gen(tmp_path, "-m", "hydra/launcher=submitit_local", "shard.index=range(0,2)", "shard.count=2",
                       "output_dir=rel", *SMALL, **{KILL_SHARD_ENV: "0"})
    assert killed.returncode == 1, killed.stderr
    assert "Traceback" not in killed.stderr
    line = next(x for x in _errors(killed.stderr) if x.startswith("rose-gen: error: shard 0: stopped while running"))
    assert "UncompletedJobError" in line
    log = Path(line.split("; its log: ")[1])
    assert log.is_file() and log.is_relative_to(tmp_path / "rel.shards" / ".submitit")
    assert _leftovers(tmp_path / "rel.shards") == [".submitit"]  # the logs the line names are kept


def test_a_launcher_that_cannot_start_is_one_line(tmp_path) -> None:
    failed = _rose_gen(tmp_path, "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0", "shard.index=range(0,2)",
                       "shard.count=2", "output_dir=rel", *SMALL)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert _errors(failed.stderr) == [
        "rose-gen: error: the launcher failed before any shard ran: ValueError: n_jobs == 0 in Parallel has no meaning",
        "rose-gen: error: 2 of 2 shards did not finish; nothing merged. Fix the cause and run the same command again: "
        "finished shards are kept"], failed.stderr
    assert not (tmp_path / "rel").exists()


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
        assert params["name"] == "rose-gen" and params["cpus_per_task"] == 1 and params["mem_gb"] == 2
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


if importlib.util.find_spec("ray") is None:
    BAD_SWEEPS.append((["hydra/launcher=rose_ray", "shard.index=range(0,2)", "shard.count=2"],
                       "hydra/launcher=rose_ray needs hydra_plugins.hydra_ray_launcher and ray (not installed); "
                       "install with: pip install 'rose-toolkit[ray]'"))
if shutil.which("srun") is None:
    BAD_SWEEPS.append((["hydra/launcher=rose_slurm", "shard.index=range(0,2)", "shard.count=2"],
                       "hydra/launcher=rose_slurm needs srun on PATH (not found); run it on a SLURM login node"))


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


def test_slurm_jobs_are_sized_from_workers() -> None:
    assert [shard_mem_gb(w) for w in (1, 2, 4, 8)] == [2, 2, 3, 5]
    overrides = ["hydra/launcher=rose_slurm", "shard.count=2", "shard.index=0", "output_dir=/x", "workers=4"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    params = instantiate(cfg.hydra.launcher).params
    assert (params["cpus_per_task"], params["mem_gb"]) == (4, 3)


def test_output_paths_are_made_absolute_before_launching(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(["output_dir=out/my rel", "shard.index=0", "shard.count=2", *SMALL])
    given = ["shard.index=range(0,2)", "shard.count=2", "output_dir=out/my rel", "shard.dir=sh", "seed=3"]
    made = absolute_paths(given, config)
    assert made[:2] == given[:2] and made[4] == "seed=3"
    assert made[2] == f"output_dir='{tmp_path}/out/my rel'" and made[3] == f"shard.dir={tmp_path}/sh"
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):  # Hydra reads them back
        cfg = compose("config", overrides=[*made[1:], "shard.index=0"])
    assert cfg.output_dir == f"{tmp_path}/out/my rel" and cfg.shard.dir == f"{tmp_path}/sh"
    assert absolute_paths(["output_dir=/abs/x"], config) == ["output_dir=/abs/x"]

"""The generator's console scripts without the gen extra: one line naming it, status 2."""

from __future__ import annotations

from importlib import metadata

from rose_gen.cli import launch


def test_the_dev_install_has_every_generator_requirement():
    assert launch.missing_requirements() == []
    assert any('extra == "gen"' in r for r in metadata.requires(launch.DISTRIBUTION))


def test_a_missing_requirement_is_one_line_naming_the_extra(monkeypatch, capsys):
    real_version = metadata.version

    def version(name: str) -> str:
        if name in ("hydra-core", "cairosvg"):
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(metadata, "version", version)
    assert launch.missing_requirements() == ["cairosvg", "hydra-core"]
    assert launch.gen() == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-gen: error: ")
    assert "missing: cairosvg, hydra-core" in err and "pip install 'rose-toolkit[gen]'" in err


def test_a_module_missing_at_import_is_reported_the_same_way(monkeypatch, capsys):
    monkeypatch.setattr(launch, "missing_requirements", lambda: [])
    assert launch.run("rose-demo", "a_third_party_module_that_is_not_installed") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rose-toolkit[gen]" in err

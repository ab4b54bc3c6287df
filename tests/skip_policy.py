"""The suite's skip policy (a pytest plugin, loaded by tests/conftest.py): a test never skips,
except for a declared optional third-party package.

A fresh clone must test everything (the reference data ship in tests/data; the Debian
and PyPI packages the suite needs are installed by ./run.sh), so any skip fails the run:
``pytest.skip``, ``skipif``, ``importorskip``, a module-level skip. The one exception is a
package that is deliberately *not* a test dependency (say, a harness needing torch): mark
the test

    @pytest.mark.optional_dependency("lmms-eval", module="lmms_eval")

and it is skipped, with that reason, exactly when the module cannot be imported; if the
module is there, the test runs and any skip of it fails. A marker naming one of the dev
extra's packages is refused (those must be imported, not skipped).
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

MARKER = "optional_dependency"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(distribution, module=None): skip only when this optional "
        "third-party package (not a test dependency) is not installed")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def test_dependencies() -> frozenset[str]:
    """Distribution names the dev extra installs (the suite may not skip on those)."""
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = set()
    for requirement in (*extras["dev"], *extras.get("gen", ())):
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        if match:
            names.add(_canonical(match.group()))
    return frozenset(names)


def _declared_missing(item: pytest.Item) -> str | None:
    """The reason a marked test may skip (its optional package is missing), else None."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    distribution = marker.args[0]
    if _canonical(distribution) in test_dependencies():
        raise pytest.UsageError(f"{item.nodeid}: {distribution} is a test dependency; import it, "
                                f"do not mark it @{MARKER}")
    module = marker.kwargs.get("module") or distribution.replace("-", "_")
    if importlib.util.find_spec(module) is None:
        return f"optional package {distribution} is not installed (not a test dependency)"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = _declared_missing(item)
    if reason:
        pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and _declared_missing(item) is None:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"undeclared skip ({reason}): a fresh clone must run every test; "
                           f"install what it needs, or mark an optional third-party package "
                           f"@pytest.mark.{MARKER} (tests/skip_policy.py)")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"module-level skip ({reason}) is not allowed: mark the tests "
                           f"@pytest.mark.{MARKER} instead (tests/skip_policy.py)")

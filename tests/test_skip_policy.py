"""The suite's skip policy (tests/skip_policy.py), run on small inner test sessions."""

from __future__ import annotations

import pytest


@pytest.fixture
def session(pytester: pytest.Pytester) -> pytest.Pytester:
    return pytester


def run(session: pytest.Pytester, source: str) -> pytest.RunResult:
    (session.path / "test_demo.py").write_text(source)
    return session.runpytest("test_demo.py", "-q", "-p", "no:cacheprovider",
                             "-p", "tests.skip_policy")


@pytest.mark.parametrize("body", [
    "def test_x():\n    pytest.skip('no data')\n",
    "@pytest.mark.skipif(True, reason='no data')\ndef test_x():\n    pass\n",
    "def test_x():\n    pytest.importorskip('a_module_that_is_not_there')\n",
])
def test_every_undeclared_skip_fails(session, body):
    result = run(session, "import pytest\n\n" + body)
    result.assert_outcomes(**({"errors": 1} if "skipif" in body else {"failed": 1}))
    assert "undeclared skip" in result.stdout.str()


def test_a_module_level_skip_fails(session):
    result = run(session, "import pytest\npytest.skip('no data', allow_module_level=True)\n")
    assert result.ret != 0 and "module-level skip" in result.stdout.str()


def test_a_declared_optional_package_may_skip_only_when_missing(session):
    result = run(session, (
        "import pytest\n\n"
        "@pytest.mark.optional_dependency('not-installed-pkg')\n"
        "def test_missing():\n    import not_installed_pkg\n\n"
        "@pytest.mark.optional_dependency('some-present', module='json')\n"
        "def test_present_runs():\n    import json\n\n"
        "@pytest.mark.optional_dependency('some-present', module='json')\n"
        "def test_present_may_not_skip():\n    pytest.skip('changed my mind')\n"))
    result.assert_outcomes(skipped=1, passed=1, failed=1)
    assert "optional package not-installed-pkg is not installed" in result.stdout.str() or \
        result.ret != 0


def test_a_test_dependency_cannot_be_declared_optional(session):
    result = run(session, ("import pytest\n\n@pytest.mark.optional_dependency('hypothesis')\n"
                           "def test_x():\n    pass\n"))
    assert result.ret != 0 and "is a test dependency" in result.stdout.str()

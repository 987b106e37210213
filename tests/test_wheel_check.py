"""scripts/check_wheel.py, the check `make wheel-check` and the release
workflow run on what they built: it fails where a file a site needs is
missing.

An sdist ships no scripts/, so its test run skips this module.
"""

from __future__ import annotations

import importlib.util
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_wheel.py"
pytestmark = pytest.mark.skipif(
    not SCRIPT.exists(), reason="the sdist leaves out the repository's scripts"
)


@pytest.fixture
def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def a_wheel(tmp_path: Path, names: list[str]) -> str:
    path = tmp_path / "django_whos_online-0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name in names:
            wheel.writestr(name, "")
    return str(path)


def lua_scripts() -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "whos_online").rglob("*.lua")
    )


def test_the_checker_requires_every_lua_script_of_the_checkout(
    checker: ModuleType,
) -> None:
    assert lua_scripts()
    assert set(lua_scripts()) <= set(checker.REQUIRED)


def test_a_wheel_with_everything_required_passes(
    checker: ModuleType, tmp_path: Path
) -> None:
    assert checker.wheel_problems(a_wheel(tmp_path, checker.REQUIRED)) == []


def test_a_wheel_without_the_lua_scripts_fails(
    checker: ModuleType, tmp_path: Path
) -> None:
    names = [name for name in checker.REQUIRED if not name.endswith(".lua")]
    problems = checker.wheel_problems(a_wheel(tmp_path, names))
    assert problems == [f"missing: {name}" for name in lua_scripts()]
    assert checker.main([a_wheel(tmp_path, names)]) == 1


def an_sdist(tmp_path: Path, names: list[str]) -> str:
    path = tmp_path / "django_whos_online-0.tar.gz"
    with tarfile.open(path, "w:gz") as sdist:
        for name in names:
            sdist.addfile(tarfile.TarInfo(f"django_whos_online-0/{name}"))
    return str(path)


def test_an_sdist_of_the_package_tests_and_docs_passes(
    checker: ModuleType, tmp_path: Path
) -> None:
    names = ["whos_online/__init__.py", "tests/conftest.py", "docs/index.md"]
    assert checker.sdist_problems(an_sdist(tmp_path, names)) == []


def test_an_sdist_with_the_example_project_fails(
    checker: ModuleType, tmp_path: Path
) -> None:
    stray = "example_project/templates/whos_online/base.html"
    problems = checker.sdist_problems(an_sdist(tmp_path, [stray]))
    assert problems == [f"should not be there: django_whos_online-0/{stray}"]

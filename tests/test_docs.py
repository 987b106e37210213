"""The documentation keeps up with the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from whos_online import checks, urls
from whos_online.conf import Settings
from whos_online.templatetags.whos_online import register

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = sorted(
    f"WHOS_ONLINE_{name}"
    for name, value in vars(Settings).items()
    if isinstance(value, property)
)


TAGS = sorted(register.tags)
FILTERS = sorted(register.filters)
ENDPOINTS = sorted(str(pattern.pattern) for pattern in urls.urlpatterns)
COMMANDS = sorted(
    path.stem
    for path in (ROOT / "whos_online/management/commands").glob("*.py")
    if not path.name.startswith("_")
)


def read(path: str) -> str:
    return (ROOT / path).read_text()


def check_ids_in_code() -> set[str]:
    source = Path(checks.__file__).read_text()
    return set(re.findall(r'"(whos_online\.[EW]\d{3})"', source))


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_setting_is_in_the_settings_reference(setting: str) -> None:
    assert f"| `{setting}` |" in read("docs/settings.md")


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_setting_is_in_the_readme_table(setting: str) -> None:
    assert f"| `{setting}` |" in read("README.md")


def test_every_setting_has_a_validation_rule() -> None:
    assert sorted(f"WHOS_ONLINE_{name}" for name in checks.SETTING_RULES) == SETTINGS


def test_every_check_id_is_documented() -> None:
    documented = set(re.findall(r"`(whos_online\.[EW]\d{3})`", read("docs/checks.md")))
    assert check_ids_in_code() == documented


def test_the_readme_shows_the_last_benchmark_headline() -> None:
    """`make bench` writes docs/benchmarks/headline.md; the README quotes it."""
    assert read("docs/benchmarks/headline.md").strip() in read("README.md")


@pytest.mark.parametrize("tag", TAGS)
def test_every_tag_is_in_the_template_tags_page(tag: str) -> None:
    assert f"{{% {tag}" in read("docs/template-tags.md")


@pytest.mark.parametrize("name", FILTERS)
def test_every_filter_is_in_the_template_tags_page(name: str) -> None:
    assert f"|{name}" in read("docs/template-tags.md")


@pytest.mark.parametrize("route", ENDPOINTS)
def test_every_endpoint_is_in_the_endpoints_page(route: str) -> None:
    shown = route or "/"  # the include's own path
    assert f"| `{shown}`" in read("docs/endpoints.md")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_in_the_commands_page(command: str) -> None:
    assert f"## `{command}`" in read("docs/commands.md")


def test_the_readme_links_only_to_absolute_addresses() -> None:
    """PyPI shows the README without the repository, so a relative link breaks."""
    targets = re.findall(r"\]\(([^)]*)\)", read("README.md"))
    assert targets
    assert [t for t in targets if not t.startswith("https://")] == []


# What we support is written in four places; the matrix is the one that runs.


def matrix() -> dict[str, list[str]]:
    """noxfile.py's PYTHONS_BY_DJANGO, read without importing nox."""
    for node in ast.parse(read("noxfile.py")).body:
        if isinstance(node, ast.Assign) and "PYTHONS_BY_DJANGO" in [
            target.id for target in node.targets if isinstance(target, ast.Name)
        ]:
            value: dict[str, list[str]] = ast.literal_eval(node.value)
            return value
    raise AssertionError("noxfile.py sets no PYTHONS_BY_DJANGO")


def pythons_in_matrix() -> list[str]:
    pythons = {python for pythons in matrix().values() for python in pythons}
    return sorted(pythons, key=lambda python: int(python.split(".")[1]))


def test_the_classifiers_name_exactly_the_pythons_the_matrix_tests() -> None:
    declared = re.findall(
        r'"Programming Language :: Python :: (3\.\d+)"', read("pyproject.toml")
    )
    assert declared == pythons_in_matrix()


def test_requires_python_admits_exactly_the_pythons_the_matrix_tests() -> None:
    oldest, newest = pythons_in_matrix()[0], pythons_in_matrix()[-1]
    after_newest = f"3.{int(newest.split('.')[1]) + 1}"
    assert f'requires-python = ">={oldest},<{after_newest}"' in read("pyproject.toml")


def test_the_classifiers_name_exactly_the_django_releases_the_matrix_tests() -> None:
    declared = re.findall(
        r'"Framework :: Django :: (\d+\.\d+)"', read("pyproject.toml")
    )
    assert declared == list(matrix())


def test_the_django_floor_is_the_oldest_release_the_matrix_tests() -> None:
    assert f'"django>={next(iter(matrix()))}"' in read("pyproject.toml")


def test_each_django_release_of_the_matrix_has_its_requirements_and_no_other() -> None:
    files = sorted(path.name for path in (ROOT / "requirements").glob("django*.txt"))
    assert files == [f"django{django.replace('.', '')}.txt" for django in matrix()]


def test_the_readme_supports_exactly_what_the_matrix_tests() -> None:
    supported = re.search(r"Supported: (.*?); Redis", read("README.md"), re.DOTALL)
    assert supported is not None
    sentence = " ".join(supported.group(1).split())
    assert f"Python {pythons_in_matrix()[0]} to {pythons_in_matrix()[-1]}" in sentence
    djangos = sentence.split("Django", 1)[1]
    assert re.findall(r"\d+\.\d+", djangos) == list(matrix())


def make_targets() -> dict[str, str]:
    """Each Makefile target and its recipe."""
    found = re.findall(r"^([\w-]+):[^=\n]*\n((?:\t.*\n)*)", read("Makefile"), re.M)
    return dict(found)


def left_out_of_make_test() -> dict[str, list[str]]:
    """Each marker `make test` deselects, and the targets that run it."""
    fast = re.search(r'^FAST := -m "(.*)"$', read("Makefile"), re.M)
    assert fast is not None
    return {
        marker: [
            target
            for target, recipe in make_targets().items()
            if f"-m {marker} " in recipe
        ]
        for marker in re.findall(r"not (\w+)", fast.group(1))
    }


def readme_on_developing() -> str:
    return read("README.md").split("## Developing", 1)[1]


def test_each_suite_make_test_leaves_out_has_a_target_of_its_own() -> None:
    left_out = left_out_of_make_test()
    assert left_out
    assert all(len(targets) == 1 for targets in left_out.values())


@pytest.mark.parametrize(
    "target", [t for targets in left_out_of_make_test().values() for t in targets]
)
def test_the_readme_names_what_make_test_leaves_out(target: str) -> None:
    assert f"`make {target}`" in readme_on_developing()


@pytest.mark.parametrize(
    "target", re.findall(r"^make ([\w-]+)$", read(".ci/run"), re.M)
)
def test_the_readme_names_each_step_of_the_ci_run(target: str) -> None:
    assert f"`make {target}`" in readme_on_developing()

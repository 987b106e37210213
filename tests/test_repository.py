"""The repository's own files agree with the package and the README: the nox
matrix, the Makefile, .ci/run and the release workflow.

An sdist ships none of these, so its test run skips this module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IN_SDIST = (ROOT / "PKG-INFO").exists()
pytestmark = pytest.mark.skipif(
    IN_SDIST, reason="the sdist leaves out the repository's own files"
)


def read(path: str) -> str:
    return (ROOT / path).read_text()


def ci_steps() -> list[str]:
    """The make targets .ci/run runs, in order."""
    if IN_SDIST:
        return []
    return re.findall(r"^make ([\w-]+)$", read(".ci/run"), re.M)


# What we support is written in several places; the matrix is the one that runs.


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


def test_requires_python_starts_at_the_oldest_python_the_matrix_tests() -> None:
    oldest = pythons_in_matrix()[0]
    assert f'requires-python = ">={oldest}"\n' in read("pyproject.toml")


def test_requires_python_caps_no_newer_python() -> None:
    """The classifiers say what is tested; a cap would refuse installs on a
    new Python that works."""
    found = re.search(r'^requires-python = "(.*)"$', read("pyproject.toml"), re.M)
    assert found is not None
    assert "<" not in found.group(1)


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
    if IN_SDIST:
        return {}
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


@pytest.mark.parametrize("target", ci_steps())
def test_the_readme_names_each_step_of_the_ci_run(target: str) -> None:
    assert f"`make {target}`" in readme_on_developing()


# The release workflow, read as text: PyYAML is no dependency of ours. It is
# written in GitHub's usual layout, two spaces a level.

WORKFLOW = ".github/workflows/release.yml"
CI = ".github/workflows/ci.yml"


def workflow_section(name: str, workflow: str = WORKFLOW) -> str:
    """A top-level key's block, as the text indented under it."""
    found = re.search(rf"^{name}:(.*?)(?=^\S|\Z)", read(workflow), re.M | re.DOTALL)
    assert found is not None, f"{workflow} has no {name}:"
    return found.group(1)


def workflow_jobs() -> dict[str, str]:
    parts = re.split(r"^  ([\w-]+):\n", workflow_section("jobs"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_release_workflow_runs_when_a_version_tag_is_pushed() -> None:
    trigger = " ".join(workflow_section("on").split())
    assert trigger == 'push: tags: - "v[0-9]*"'


def test_the_release_workflow_builds_the_sdist_and_wheel_once() -> None:
    assert read(WORKFLOW).count("python -m build") == 1
    assert "python -m build" in workflow_jobs()["build"]


@pytest.mark.parametrize(
    "check",
    ["twine check --strict dist/*", "scripts/check_wheel.py dist/*.whl dist/*.tar.gz"],
)
def test_the_build_job_checks_what_it_built_before_handing_it_on(check: str) -> None:
    build = workflow_jobs()["build"]
    built, handed_on = build.index("python -m build"), build.index("upload-artifact")
    assert built < build.index(check) < handed_on


def test_the_build_job_waits_for_every_check_of_the_ci_workflow() -> None:
    assert "uses: ./.github/workflows/ci.yml" in workflow_jobs()["ci"]
    assert "needs: ci" in workflow_jobs()["build"]


def test_the_publish_job_publishes_what_the_build_job_built() -> None:
    publish = workflow_jobs()["publish"]
    uploaded = re.search(
        r"upload-artifact.*?name: (\S+)", workflow_jobs()["build"], re.DOTALL
    )
    downloaded = re.search(r"download-artifact.*?name: (\S+)", publish, re.DOTALL)
    assert uploaded is not None and downloaded is not None
    assert "needs: build" in publish
    assert downloaded.group(1) == uploaded.group(1)


def test_the_publish_job_uses_trusted_publishing_in_the_pypi_environment() -> None:
    publish = workflow_jobs()["publish"]
    assert re.search(r"environment:\s+name: pypi\n", publish)
    assert "uses: pypa/gh-action-pypi-publish@" in publish
    assert "secrets." not in read(WORKFLOW)


def test_only_the_publish_job_may_ask_for_an_identity_token() -> None:
    asking = [name for name, job in workflow_jobs().items() if "id-token: write" in job]
    assert asking == ["publish"]
    assert " ".join(workflow_section("permissions").split()) == "{}"


@pytest.mark.parametrize("workflow", [WORKFLOW, CI])
def test_every_action_of_the_workflows_is_pinned_to_a_commit(workflow: str) -> None:
    """A workflow of this repository (``./``) is read from the same commit."""
    actions = re.findall(r"uses: (\S+)", read(workflow))
    assert actions
    pinned = [
        a for a in actions if a.startswith("./") or re.search(r"@[0-9a-f]{40}$", a)
    ]
    assert pinned == actions


# The CI workflow: .ci/run on every push and pull request, and for releases.


def test_ci_runs_on_every_push_and_pull_request_and_for_the_release() -> None:
    trigger = " ".join(workflow_section("on", CI).split())
    assert trigger == 'push: branches: ["**"] pull_request: workflow_call:'


def test_ci_runs_the_whole_ci_script() -> None:
    assert "run: bash .ci/run" in read(CI)


def test_ci_installs_every_python_the_matrix_tests() -> None:
    found = re.search(r"python-version: \|\n((?:\s+3\.\d+\n)+)", read(CI))
    assert found is not None
    assert sorted(found.group(1).split()) == sorted(pythons_in_matrix())


def test_every_script_opens_with_its_contract_and_no_flags() -> None:
    """A first line of script flags (``#!lua flags=no-writes``) is refused
    by Redis 6.2, which we support, and by fakeredis, which sites test with:
    every script opens with the comment naming its keys, arguments and reply."""
    scripts = sorted(Path(ROOT, "whos_online", "store", "lua").glob("*.lua"))
    assert scripts
    for script in scripts:
        assert script.read_text().startswith("-- "), script.name

"""The documentation keeps up with the code."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from django.test import Client

from whos_online import __version__, checks, jinja2, rules, url_checks, urls
from whos_online.conf import Config, is_setting
from whos_online.templatetags.whos_online import register

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = sorted(
    f"WHOS_ONLINE_{field.name.upper()}"
    for field in dataclasses.fields(Config)
    if is_setting(field)
)


TAGS = sorted(register.tags)
FILTERS = sorted(register.filters)
ENDPOINTS = sorted(str(pattern.pattern) for pattern in urls.urlpatterns)
PACKAGE = ROOT / "whos_online"
# Each module of the package as docs/architecture.md names it: "conf.py",
# "store/keys.py"; migrations and packages' empty __init__.py left out.
MODULES = sorted(
    str(path.relative_to(PACKAGE))
    for path in PACKAGE.rglob("*.py")
    if path.parent.name != "migrations"
    and (path.name != "__init__.py" or path.parent == PACKAGE / "store")
)
COMMANDS = sorted(
    path.stem
    for path in (ROOT / "whos_online/management/commands").glob("*.py")
    if not path.name.startswith("_")
)


def read(path: str) -> str:
    return (ROOT / path).read_text()


def check_ids_in_code() -> set[str]:
    source = "".join(Path(str(m.__file__)).read_text() for m in (checks, url_checks))
    return set(re.findall(r'"(whos_online\.[EW]\d{3})"', source))


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_setting_is_in_the_settings_reference(setting: str) -> None:
    assert f"| `{setting}` |" in read("docs/settings.md")


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_setting_is_in_the_readme_table(setting: str) -> None:
    assert f"| `{setting}` |" in read("README.md")


def test_every_setting_has_a_validation_rule() -> None:
    assert sorted(f"WHOS_ONLINE_{name}" for name in rules.SETTING_RULES) == SETTINGS


@pytest.mark.parametrize("module", MODULES)
def test_every_module_is_in_the_architecture_page(module: str) -> None:
    assert f"`{module}`" in read("docs/architecture.md")


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


def test_the_changelog_opens_with_the_version_being_made() -> None:
    """A .dev version is still "Unreleased"; a release has a heading of its own."""
    heading = re.search(r"^## (\S+)", read("CHANGELOG.md"), re.M)
    assert heading is not None
    assert heading.group(1) == ("Unreleased" if ".dev" in __version__ else __version__)


def test_the_readme_says_how_to_install_from_the_repository() -> None:
    source = "git+https://github.com/django-whos-online/django-whos-online@main"
    assert f'pip install "django-whos-online @ {source}"' in read("README.md")


@pytest.mark.django_db
def test_the_json_example_has_every_key_the_endpoint_answers(client: Client) -> None:
    found = re.search(r"```json\n(.*?)```", read("docs/endpoints.md"), re.DOTALL)
    assert found is not None
    example = json.loads(found.group(1))
    answer = client.get("/whos-online/online.json").json()
    assert sorted(example) == sorted(answer)
    assert sorted(example["today"]) == sorted(answer["today"])
    assert sorted(example["counts"]) == sorted(answer["counts"])


@pytest.mark.parametrize(
    "path", sorted(str(p.name) for p in (ROOT / "docs").glob("*.md"))
)
def test_every_setting_the_docs_name_exists(path: str) -> None:
    named = set(re.findall(r"WHOS_ONLINE_[A-Z0-9_]*[A-Z0-9]", read(f"docs/{path}")))
    misspelt_on_purpose = {"WHOS_ONLINE_WINDOWS"}  # checks.md's example for W005
    known = {f"WHOS_ONLINE_{name}" for name in rules.SETTING_RULES}
    assert named - misspelt_on_purpose <= known


@pytest.mark.parametrize("name", sorted({*jinja2.GLOBALS, *jinja2.FILTERS}))
def test_every_jinja2_function_and_filter_is_in_the_jinja2_page(name: str) -> None:
    assert f"{name}(" in read("docs/jinja2.md") or f"|{name}" in read("docs/jinja2.md")


# docs/architecture.md says what the code does, where a test can tell.


def architecture_section(title: str) -> str:
    text = read("docs/architecture.md")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : None if end == -1 else end]


def layers_in_the_docs() -> list[set[str]]:
    """The layers table, top to bottom: a row's ``;`` parts are layers."""
    layers = []
    for row in architecture_section("Layers").splitlines():
        cells = row.split("|")
        if len(cells) < 4 or "`" not in cells[2]:
            continue
        for part in cells[2].split(";"):
            names = re.findall(r"`([a-z_0-9]+)(?:\.py|/)`", part)
            layers.append(set(names))
    return layers


def layers_in_the_contract() -> list[set[str]]:
    """The layers import-linter checks (pyproject.toml), top to bottom: the
    first contract's list (read as text: Python 3.10 has no tomllib)."""
    text = read("pyproject.toml")
    block = text[text.index("layers = [") : text.index("]", text.index("layers = ["))]
    return [
        {name.strip().removeprefix("whos_online.") for name in layer.split("|")}
        for layer in re.findall(r'"([^"]+)"', block)
    ]


def test_the_architecture_page_shows_the_layers_import_linter_checks() -> None:
    assert layers_in_the_docs() == layers_in_the_contract()


def test_every_name_the_path_of_a_request_gives_exists() -> None:
    import importlib
    import inspect

    path = architecture_section("The path of a request")
    path += architecture_section("The path of a widget render")
    named = set(re.findall(r"`([A-Za-z_]+)\.([A-Za-z_]+)`", path))
    assert named  # the page names what it describes
    places = {
        "Store": "whos_online.store",
        "Sighting": "whos_online.store",
        "ServerClock": "whos_online.state",
        "Page": "whos_online.page",
        "Gate": "whos_online.gate",
        "Visit": "whos_online.visitors",
        "Roster": "whos_online.roster",
    }
    for owner, attribute in named - {("request", "user")}:
        if attribute == "lua":
            assert Path(ROOT, "whos_online/store/lua", f"{owner}.lua").exists()
        elif attribute == "html":
            assert Path(
                ROOT, "whos_online/templates/whos_online", f"{owner}.html"
            ).exists()
        elif owner in places:
            cls = getattr(importlib.import_module(places[owner]), owner)
            source = inspect.getsource(cls)
            assert hasattr(cls, attribute) or f"self.{attribute} =" in source, (
                f"{owner}.{attribute}"
            )
        else:
            module = importlib.import_module(f"whos_online.{owner}")
            assert hasattr(module, attribute), f"{owner}.{attribute}"

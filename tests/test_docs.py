"""The documentation keeps up with the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from whos_online import checks
from whos_online.conf import Settings

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = sorted(
    f"WHOS_ONLINE_{name}"
    for name, value in vars(Settings).items()
    if isinstance(value, property)
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

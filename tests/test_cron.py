"""The cron lines and the systemd units of docs/operations.md, run as cron
and systemd run them: no shell profile, no virtual environment activated,
``PATH=/usr/bin:/bin``. Each runs ``prune_online`` of a site in a folder
of its own (its ``manage.py``, and this repository's packages beside it)
on the test settings, with the interpreter this suite runs on put where
the page writes ``/srv/site/.venv/bin/python``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = (ROOT / "docs/operations.md").read_text()
SITE = "/srv/site"
INTERPRETER = "/srv/site/.venv/bin/python"
SETTINGS = "mysite.settings.production"
# The crontab entries the page shows: five time fields, then the command.
CRON_LINES = re.findall(r"^\*/5 \* \* \* \* (.+)$", OPERATIONS, re.M)
# The unit files the page shows, by the name in their first line.
UNITS = dict(
    re.findall(r"```ini\n# /etc/systemd/system/(\S+)\n(.*?)```", OPERATIONS, re.S)
)
# A site's manage.py, as `django-admin startproject` writes it.
MANAGE_PY = """\
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", {default!r})
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
"""


def site(folder: Path, default_settings: str) -> Path:
    """A site in FOLDER whose manage.py names DEFAULT_SETTINGS, with the
    app and the test settings importable from beside it, as a site's own
    packages are."""
    folder.mkdir()
    (folder / "manage.py").write_text(MANAGE_PY.format(default=default_settings))
    for package in ("tests", "whos_online"):
        (folder / package).symlink_to(ROOT / package)
    return folder


def filled_in(text: str, folder: Path) -> str:
    """The page's text for a site in FOLDER, on this suite's interpreter."""
    return (
        text.replace(INTERPRETER, sys.executable)
        .replace(SITE, str(folder))
        .replace(SETTINGS, "tests.settings")
    )


def test_the_page_shows_a_plain_line_and_one_with_the_settings_module() -> None:
    assert len(CRON_LINES) == 2
    plain, with_settings = CRON_LINES
    assert plain.startswith(f"cd {SITE} && {INTERPRETER} manage.py prune_online")
    assert with_settings == plain.replace(
        f"&& {INTERPRETER}", f"&& DJANGO_SETTINGS_MODULE={SETTINGS} {INTERPRETER}"
    )


@pytest.mark.parametrize(
    ("line", "default_settings"),
    [
        (0, "tests.settings"),
        # manage.py names settings that do not import here: the line works
        # only because it names the right ones.
        (1, "mysite.settings"),
    ],
    ids=["plain", "with-settings-module"],
)
def test_a_documented_cron_line_runs_under_crons_environment(
    tmp_path: Path, line: int, default_settings: str
) -> None:
    folder = site(tmp_path / "site", default_settings)
    command = filled_in(CRON_LINES[line], folder)
    done = subprocess.run(
        ["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Exit 0 and not a word, so cron mails nothing.
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_readme_and_the_deployment_page_give_the_same_line() -> None:
    plain = f"*/5 * * * * {CRON_LINES[0]}"
    assert plain in (ROOT / "README.md").read_text()
    assert plain in (ROOT / "docs/deployment.md").read_text()


def test_no_page_gives_cron_a_bare_python() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for command in re.findall(r"^\*/5 \* \* \* \* (.+)$", page.read_text(), re.M):
            assert " python " not in f" {command} ", page


def test_the_service_runs_as_systemd_runs_it(tmp_path: Path) -> None:
    """No shell: ExecStart's words, in WorkingDirectory, with Environment=
    and nothing else of this process's environment."""
    folder = site(tmp_path / "site", "mysite.settings")
    service = filled_in(UNITS["prune-online.service"], folder)
    values = dict(re.findall(r"^(\w+)=(.*)$", service, re.M))
    name, value = values["Environment"].split("=", 1)
    done = subprocess.run(
        values["ExecStart"].split(),
        cwd=values["WorkingDirectory"],
        env={"PATH": "/usr/bin:/bin", name: value},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="needs systemd-analyze"
)
def test_the_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    folder = site(tmp_path / "site", "mysite.settings")
    for name, text in UNITS.items():
        (tmp_path / name).write_text(filled_in(text, folder))
    done = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / name) for name in UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sorted(UNITS) == ["prune-online.service", "prune-online.timer"]
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="needs systemd-analyze"
)
def test_the_timer_fires_every_five_minutes() -> None:
    (calendar,) = re.findall(r"^OnCalendar=(.+)$", UNITS["prune-online.timer"], re.M)
    done = subprocess.run(
        ["systemd-analyze", "calendar", "--iterations=3", calendar],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Normalized form: *-*-* *:00/5:00" in done.stdout

"""The test suite on every Python and Django release we support.

`make test-matrix` runs all sessions. To run one, list them with
`.venv/bin/nox --list` and pick one: `.venv/bin/nox -s "tests(django6.1-py3.13)"`.
Arguments after `--` go to pytest.
"""

from __future__ import annotations

import nox

nox.options.error_on_missing_interpreters = True

# Each Django release on the Pythons it supports, from our floor of 3.10 up to
# 3.13. The classifiers, requires-python's floor (it has no cap) and the Django
# floor in pyproject.toml, the requirements/django*.txt files and the
# "Supported:" sentence in README.md say the same (tests/test_repository.py
# holds them to it); change them together.
PYTHONS_BY_DJANGO = {
    "5.2": ["3.10", "3.11", "3.12", "3.13"],
    "6.0": ["3.12", "3.13"],
    "6.1": ["3.12", "3.13"],
}
COMBINATIONS = [
    (python, django)
    for django, pythons in PYTHONS_BY_DJANGO.items()
    for python in pythons
]


@nox.session
@nox.parametrize(
    ("python", "django"),
    COMBINATIONS,
    ids=[f"django{django}-py{python}" for python, django in COMBINATIONS],
)
def tests(session: nox.Session, django: str) -> None:
    # requirements/django52.txt and its siblings pin Django, the django-redis
    # release for it and the test tools.
    session.install("-r", f"requirements/django{django.replace('.', '')}.txt")
    session.install("-e", ".")
    # The fast suite on fakeredis; the server and browser suites run once, on
    # the default Python and Django (make test-servers, make test-browser).
    fast = ["-m", "not real_redis and not browser", "-p", "no:cov"]
    session.run("python", "-m", "pytest", *fast, *session.posargs)

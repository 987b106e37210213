"""Sphinx configuration: the Markdown pages in docs/ as a site (furo theme),
plus the Python API read from whos_online.api's docstrings.

Built by `make docs` and by Read the Docs, with warnings as errors.
"""

from __future__ import annotations

import sys
from importlib.metadata import version as installed_version
from pathlib import Path

import django
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# autodoc imports whos_online.api, which needs Django set up; importing it
# connects to nothing, so no cache or Redis is configured.
settings.configure(
    INSTALLED_APPS=[
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "whos_online",
    ],
)
django.setup()

project = "django-whos-online"
author = "django-whos-online developers"
copyright = "django-whos-online developers"
release = installed_version("django-whos-online")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    # Written by `make bench` for the README to quote; benchmarks/README.md
    # holds the same table.
    "benchmarks/headline.md",
]

# Let `[text](page.md#a-heading)` links find headings, as GitHub does.
myst_heading_anchors = 3

# Every cross-reference must resolve (what `sphinx-build -n` asks), here so
# that Read the Docs, which does not pass -n, checks the same.
nitpicky = True
autodoc_member_order = "bysource"
# The standard library's names in type hints: there is no inventory to link
# them to (the build fetches nothing), so they stay plain text.
nitpick_ignore = [
    ("py:class", "Any"),
    ("py:class", "collections.abc.Iterable"),
    ("py:class", "datetime"),
    ("py:class", "datetime.datetime"),
    ("py:class", "Iterable"),
]

html_theme = "furo"
html_title = "django-whos-online"

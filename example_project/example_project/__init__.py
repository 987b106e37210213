"""The project package of the django-whos-online demo."""

from __future__ import annotations

"""The demo's own app: demo users, and a ``runserver`` that says where Redis is."""

from __future__ import annotations

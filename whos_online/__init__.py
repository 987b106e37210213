"""A fast, honest "Who's Online" for Django, kept in Redis sorted sets."""

from __future__ import annotations

__version__ = "0.1.0.dev0"

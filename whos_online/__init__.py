"""A fast, honest "Who's Online" for Django, kept in Redis sorted sets."""

from __future__ import annotations

"""The presence data in Redis, behind one object: :class:`Store`.

The store owns the key layout (:mod:`.keys`), the Lua scripts (``lua/``,
run by :mod:`.scripts`), the writes, the reads and prune. It knows nothing of
requests, users or privacy rules: it is given members in their stored form
and answers in plain values (:mod:`.results`). :func:`get_store` gives the
process's store, built afresh (with its client and per-process state) when a
setting changes.
"""

from __future__ import annotations

from whos_online.conf import get_config
from whos_online.store import scripts
from whos_online.store.changes import Changes, Subscription
from whos_online.store.keys import KINDS, PEOPLE, Kind, is_room_name
from whos_online.store.prune import Prune
from whos_online.store.reads import HISTORY_MINUTES, Reads
from whos_online.store.results import (
    Counts,
    History,
    LastSeen,
    LoggedOut,
    Pruned,
    Raised,
    RoomCount,
    Sighting,
    Snapshot,
    Stamp,
    Today,
)
from whos_online.store.writes import Writes

__all__ = [
    "HISTORY_MINUTES",
    "KINDS",
    "PEOPLE",
    "Counts",
    "History",
    "Kind",
    "LastSeen",
    "LoggedOut",
    "Pruned",
    "Raised",
    "RoomCount",
    "Sighting",
    "Snapshot",
    "Stamp",
    "Store",
    "Subscription",
    "Today",
    "get_store",
    "is_room_name",
]


class Store(Writes, Reads, Prune, Changes):
    """Presence in Redis for one set of settings: see the module's docs."""

    def load_scripts(self) -> None:
        """Load every script into Redis now, rather than on each script's
        first use: one ``SCRIPT LOAD`` each, which a cluster client sends to
        every master."""
        for name in scripts.script_names():
            self.client.script_load(scripts.source_of(name)[0])


_current: list[Store] = []


def get_store() -> Store:
    """The store of the settings in force."""
    config = get_config()
    if not _current or _current[0].config is not config:
        _current[:] = [Store(config)]
    return _current[0]

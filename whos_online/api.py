"""The public Python API: presence for views, serializers and consumers.

Every function is safe to call on any request: when Redis cannot be reached
it answers as if nobody were online, and never raises. Each says how many
Redis round trips it costs. ``viewer`` is the user asking (``request.user``):
every answer goes through the gate (``whos_online.gate``), as for a page
shown to that viewer. Hidden users are shown as online only to active
staff; to everyone else, and when ``viewer`` is left out, they read
``"offline"``. Where the viewer may not learn who is online
(``WHOS_ONLINE_NAMES_VISIBLE_TO``, ``WHOS_ONLINE_MIN_NAMES_LISTED``), a
status reads ``"unknown"``.

.. code-block:: python

    from whos_online import api

    api.is_online(user)                # True or False
    api.status(user)                   # "online", "away" or "offline"
    api.statuses(users)                # {pk: UserPresence}, one round trip
    api.online_users(limit=20)         # newest first
    api.counts().people                # everyone online but crawlers

    async for roster in api.changes(room="thread:42", viewer=user):
        ...                            # the room now, then after each change
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from typing import Any

from whos_online import visibility
from whos_online.gate import Status
from whos_online.live import Unavailable, follow, in_shared_threads
from whos_online.marks import room_name
from whos_online.roster import Roster, online_roster
from whos_online.roster import room_counts as online_room_counts
from whos_online.statuses import UserPresence, in_room_as_seen, presence_of
from whos_online.store import Counts, get_store
from whos_online.users import OnlineUser

__all__ = [
    "Counts",
    "OnlineUser",
    "Roster",
    "Unavailable",
    "changes",
    "Status",
    "UserPresence",
    "counts",
    "is_invisible",
    "is_online",
    "is_viewing",
    "last_seen",
    "online_users",
    "room_counts",
    "set_invisible",
    "should_notify",
    "status",
    "statuses",
    "viewers",
]


def status(user: Any, *, viewer: Any = None) -> Status:
    """``"online"`` (seen within ``WHOS_ONLINE_AWAY_AFTER``), ``"away"``
    (within the window) or ``"offline"``. One round trip and one query."""
    return presence_of([user], viewer=viewer)[0].status


def is_online(user: Any, *, viewer: Any = None) -> bool:
    """Whether ``user`` was seen within the window, as far as ``viewer`` may
    learn. One round trip and one query."""
    return status(user, viewer=viewer) in ("online", "away")


def last_seen(user: Any, *, viewer: Any = None) -> datetime | None:
    """When ``user`` was last seen (UTC), if within Redis' memory and the
    viewer may know. One round trip and one query."""
    return presence_of([user], viewer=viewer)[0].last_seen


def statuses(users: Iterable[Any], *, viewer: Any = None) -> dict[Any, UserPresence]:
    """Each user's status and last-seen time, by primary key: one round trip
    per thousand users, however many there are, and one query."""
    return {found.user.pk: found for found in presence_of(users, viewer=viewer)}


def online_users(limit: int | None = None, *, viewer: Any = None) -> list[OnlineUser]:
    """Users online now, most recently seen first, up to ``limit`` (default
    ``WHOS_ONLINE_MAX_NAMES``). One round trip and two queries."""
    return online_roster(limit, viewer=viewer).users


def counts(*, viewer: Any = None) -> Counts:
    """How many are online, by kind, as ``viewer`` may learn them (hidden
    users as ``WHOS_ONLINE_PUBLIC_HIDDEN_COUNT`` says, but to staff);
    ``.people`` leaves crawlers out. One round trip and one query; all zero
    when Redis cannot be reached."""
    return online_roster(0, viewer=viewer).counts


def room_counts(rooms: Iterable[Any], *, viewer: Any = None) -> dict[str, Counts]:
    """How many are in each room (names, or model instances), by room name,
    as ``viewer`` may learn it: one round trip for all of them, and one
    query. A name that is not valid is left out."""
    return {
        room_name(room) or "": counts
        for room, counts in online_room_counts(rooms, viewer=viewer)
        if room_name(room) is not None
    }


def viewers(
    room: Any, *, viewer: Any = None, limit: int | None = None
) -> list[OnlineUser]:
    """The users in ``room`` (a name or a model instance), newest first, as
    ``viewer`` may see them: one round trip and two queries."""
    name = room_name(room)
    if name is None:
        return []
    return online_roster(limit, room=name, viewer=viewer).users


async def changes(room: Any = None, *, viewer: Any = None) -> AsyncIterator[Roster]:
    """Who is in ``room`` (a name or a model instance; ``None``: the site),
    as ``viewer`` may see them: now, then after each join or leave (at most
    one every 250 ms), for as long as it is iterated. From the process's one
    subscription to Redis (Redis 7: sharded pub/sub); one round trip and
    two queries per change. Raises :class:`Unavailable` when Redis cannot be
    listened to, and ends if the subscription is lost or the caller leaves
    changes untaken for 10 s: poll then. It holds no thread of the caller's
    (a consumer's or a request's): the readings run in the threads live
    presence shares."""
    name = None if room is None else room_name(room)
    if room is not None and name is None:
        return
    roster = in_shared_threads(online_roster)
    async for _ in follow(name):  # with no wait given, never a keep-alive
        yield await roster(room=name, viewer=viewer)


def is_viewing(user: Any, room: Any, *, viewer: Any = None) -> bool:
    """Whether ``user`` is in ``room`` now, as ``viewer`` may learn it (a
    hidden user is in no room but to staff): one round trip and one query.
    To decide whom to notify, use :func:`should_notify`."""
    name = room_name(room)
    found = None if name is None else get_store().in_room(name, [user.pk])
    if found is None:
        return False
    visible, hidden = found
    return in_room_as_seen(user, visible, hidden, viewer)


def should_notify(users: Iterable[Any], room: Any) -> list[Any]:
    """The ``users`` who are not reading ``room`` right now, visible or
    hidden, so a chat or a forum can skip an email or a push to whoever is:
    one round trip for the whole batch. When Redis cannot be reached, every
    user is notified: better a notification too many than one missed."""
    users = list(users)
    name = room_name(room)
    if name is None:
        return users
    found = get_store().in_room(name, (user.pk for user in users))
    if found is None:
        return users
    here = found[0] | found[1]
    return [user for user in users if str(user.pk) not in here]


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline. One query."""
    return visibility.is_invisible(user)


def set_invisible(user: Any, invisible: bool = True) -> None:
    """Make ``user`` appear offline (or online again), everywhere, at once:
    two queries and one round trip (three if they are in rooms). The choice
    is kept even when Redis cannot be reached; it applies at their next
    visit then."""
    visibility.set_invisible(user, invisible)

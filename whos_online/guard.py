"""The guard cookie: proof that a visitor was recorded a moment ago.

While a guard holds, the middleware sends nothing to Redis and loads
neither the session nor the user, unless the page moves its visitor (to
other rooms, or a user to another kind of location). A guard is
``"<expires>.<kind>.<generation>.<where>.<mac>.<rooms>"``: kind ``u`` for a
user recorded among those listed, ``h`` for one recorded among the hidden,
``g`` for a guest. ``expires`` is on Redis' clock, so web servers whose
clocks disagree agree on when it runs out, and ``generation`` names the
Redis data it holds for, so a guard issued before Redis lost its data no
longer holds. ``where`` is a short hash of the user's location (its label)
as last written, empty when none is known, so a page view of another kind
records once to move it. ``rooms`` names the rooms the visitor was last
recorded in (a hash of them where the names are long: ``marks.rooms_mark``),
so a guarded page of the same rooms records nothing, and one of other rooms
moves the device out of the rooms named with plain commands. The MAC (keyed
BLAKE2b under a key derived from ``SECRET_KEY``) covers those fields, the
visitor's session key and, for a guest, the client address: logging in or
out changes the session key, and with it the guard is void. A guard that
does not verify, for whatever reason, counts as absent.

A user's guard cookie outlives its guard period (it lasts as long as the
session cookie): once run out it no longer spares Redis, but it still
knows where the user was last written to be.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import time
from collections.abc import Callable
from typing import NamedTuple

from django.http import HttpResponseBase
from django.utils.http import http_date

from whos_online.conf import Config
from whos_online.state import ServerClock

# Longer than any guard we write; a bigger cookie is not looked at.
MAX_GUARD_LENGTH = 200


class Guard(NamedTuple):
    expires: float
    """On Redis' clock; a float, which compares with a float clock faster
    than an int does."""
    is_guests: bool
    data_label: str
    where: str
    """The :func:`mark` of the location (label) last written for the user
    (``""``: none known, and always for a guest)."""
    rooms: str = ""
    """The rooms the visitor was last recorded in (``marks.rooms_mark``)."""
    is_hidden: bool = False
    """Whether the user was last recorded among the hidden (by choice or by
    ``WHOS_ONLINE_IS_HIDDEN``): the one set a renewal touches."""

    def holds(self, clock: ServerClock) -> bool:
        """Whether it still spares the visitor a record: it names the data
        generation in Redis, has not run out by Redis' clock, and both were
        learnt from Redis within the past few seconds."""
        return clock.holds_until(self.data_label, self.expires)


# Every guarded page view of a user or of a room compares a mark.
@functools.lru_cache(maxsize=4096)
def mark(location: str) -> str:
    """What a guard keeps of a location (or of any text): enough to tell
    another apart."""
    return hashlib.blake2b(location.encode(), digest_size=4).hexdigest()


def is_guests(raw: str) -> bool:
    """Whether ``raw`` says it is a guest's guard (bound to an address)."""
    return raw.partition(".")[2][:2] == "g."


def read(
    config: Config, raw: str, session_key: str, address: Callable[[], str]
) -> Guard | None:
    """The guard ``raw`` if it was issued to this session (and, for a guest,
    to the client ``address()``, asked only then), else ``None``."""
    if len(raw) > MAX_GUARD_LENGTH:
        return None
    return _verify(config, raw, session_key, address() if is_guests(raw) else "")


def _verify(config: Config, raw: str, session_key: str, address: str) -> Guard | None:
    # The rooms' names, last, may hold dots.
    fields = raw.split(".", 5)
    # The cookie is the visitor's to write: compare_digest raises on text
    # that is not ASCII.
    if len(fields) != 6 or not raw.isascii():
        return None
    expires, kind, generation, where, mac, rooms = fields
    if not expires.isdigit() or kind not in ("u", "h", "g"):
        return None
    if kind == "g" and where:
        return None
    marks = f"{where}|{rooms}"
    expected = _mac(config, expires, kind, generation, marks, address, session_key)
    if not hmac.compare_digest(expected, mac):
        return None
    return Guard(float(expires), kind == "g", generation, where, rooms, kind == "h")


def issue(
    config: Config,
    response: HttpResponseBase,
    *,
    session_key: str,
    guest_address: str | None,
    where: str = "",
    rooms: str = "",
    hidden: bool = False,
    server_now: float,
    generation: str,
    secure: bool,
) -> None:
    """Spare this visitor the next ``WHOS_ONLINE_GUARD_SECONDS`` of records.

    For a guest, give the client ``guest_address`` the guard must be
    presented with; for a user, ``where``: the :func:`mark` of their
    location as last written, and ``hidden``: whether they were recorded
    among the hidden. ``rooms``: the rooms they were last recorded in
    (``marks.rooms_mark``).
    """
    seconds = config.guard_seconds
    if seconds <= 0:
        return
    expires = str(int(server_now) + seconds)
    if guest_address is None:
        kind, address, max_age = "h" if hidden else "u", "", config.user_cookie_age
    else:
        # Kept for the window, though it spares only the guard period: a
        # guest back within the window is renewed with plain commands.
        kind, address, max_age, where = "g", guest_address, config.window, ""
    marks = f"{where}|{rooms}"
    mac = _mac(config, expires, kind, generation, marks, address, session_key)
    response.set_cookie(
        config.guard_cookie_name,
        f"{expires}.{kind}.{generation}.{where}.{mac}.{rooms}",
        max_age=max_age,
        expires=None if max_age is None else expires_date(int(time.time()) + max_age),
        path=config.cookie_path,
        domain=config.cookie_domain,
        secure=secure,
        httponly=True,
        samesite="Lax",
    )


@functools.lru_cache(maxsize=4)
def expires_date(at: int) -> str:
    """The ``Expires`` date Django's ``set_cookie`` gives a cookie of
    ``max_age`` seconds (browsers that know ``Max-Age`` ignore it),
    formatted once a second rather than for every guard (some 27,000
    instructions of each guard issued)."""
    return http_date(at)


def _mac(
    config: Config,
    expires: str,
    kind: str,
    generation: str,
    marks: str,
    address: str,
    session_key: str,
) -> str:
    hasher = config.guard_hasher.copy()
    hasher.update(
        f"{expires}|{kind}|{generation}|{marks}|{address}|{session_key}".encode()
    )
    return hasher.hexdigest()


def forget(config: Config, response: HttpResponseBase) -> None:
    """Drop the visitor's guard: their next request is recorded."""
    response.delete_cookie(
        config.guard_cookie_name,
        path=config.cookie_path,
        domain=config.cookie_domain,
        samesite="Lax",
    )

"""The guard cookie: proof that a visitor was recorded a moment ago, and who.

While a valid guard is present and unexpired, the middleware sends nothing
to Redis and does not touch the session or the user. The guard is
``"<expires>.<kind>.<pk>.<mac>"``: kind ``u`` for a user, with their primary
key when it is safe in a cookie, or ``g`` for a guest, with no key. Its MAC
(keyed BLAKE2b, with a key derived from ``SECRET_KEY``) covers those fields,
the visitor's session cookie and, for a guest, the address, so it holds only
for the identity it was issued to: logging in or out changes the session
key, and with it the guard is void. A guard that does not verify, for
whatever reason, counts as absent.

A user's guard cookie outlives its guard period: it lasts as long as the
session cookie. Once expired it no longer spares Redis, but it still names
the user, so the next record needs neither the session nor the user from
the database.

This is the hot path of every request: what it needs from settings is read
once, and guards already verified are remembered, until a setting changes.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.http import http_date

from whos_online.addresses import client_address
from whos_online.conf import conf

# Longer than any guard we write; a bigger cookie is not looked at.
MAX_GUARD_LENGTH = 128
# Primary keys that go into the cookie as they are: integers, UUIDs, slugs.
COOKIE_SAFE_PK = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")
# How many verified guards each process remembers.
VERIFIED_CACHE_SIZE = 4096


@dataclass(frozen=True)
class Guard:
    expires: int
    user_pk: str | None
    """The user it was issued to (``None``: a guest, or a key not kept in a
    cookie)."""

    @property
    def holds(self) -> bool:
        """Whether it still spares the visitor a record."""
        return self.expires >= time.time()


@dataclass(frozen=True)
class GuardConfig:
    cookie_name: str
    session_cookie_name: str
    key: bytes
    path: str
    domain: str | None
    user_cookie_age: int | None
    """``None``: the user's guard is a browser-session cookie, like the
    session cookie."""


@functools.cache
def guard_config() -> GuardConfig:
    """Cleared by ``forget()`` when a setting changes."""
    at_browser_close = settings.SESSION_EXPIRE_AT_BROWSER_CLOSE
    return GuardConfig(
        cookie_name=conf.GUARD_COOKIE_NAME,
        session_cookie_name=settings.SESSION_COOKIE_NAME,
        key=hashlib.blake2b(
            settings.SECRET_KEY.encode(), person=b"whos_online.grd", digest_size=32
        ).digest(),
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        user_cookie_age=None
        if at_browser_close
        else max(int(settings.SESSION_COOKIE_AGE), conf.GUARD_SECONDS),
    )


def forget() -> None:
    """Drop what was derived from settings (on ``setting_changed``)."""
    guard_config.cache_clear()
    _verified.cache_clear()


def read_guard(request: HttpRequest) -> Guard | None:
    """The request's guard if it was issued to this visitor, expired or not."""
    config = guard_config()
    raw = request.COOKIES.get(config.cookie_name)
    if not raw or len(raw) > MAX_GUARD_LENGTH:
        return None
    session_key = _session_key(request, config)
    address = (client_address(request.META) or "") if _is_guests(raw) else ""
    return _verified(raw, session_key, address)


def set_guard(
    response: HttpResponseBase,
    request: HttpRequest,
    *,
    user_pk: str | None = None,
    guest_address: str | None = None,
) -> None:
    """Spare this visitor the next ``WHOS_ONLINE_GUARD_SECONDS`` of records.

    Give ``user_pk`` for a user or ``guest_address`` for a guest.
    """
    seconds = conf.GUARD_SECONDS
    if seconds <= 0:
        return
    config = guard_config()
    now = int(time.time())
    expires = str(now + seconds)
    if guest_address is None:
        kind, address, max_age = "u", "", config.user_cookie_age
        pk = user_pk if user_pk and COOKIE_SAFE_PK.fullmatch(user_pk) else ""
    else:
        kind, address, max_age, pk = "g", guest_address, seconds, ""
    session_key = _session_key(request, config)
    mac = _mac(config, expires, kind, pk, address, session_key)
    response.set_cookie(
        config.cookie_name,
        f"{expires}.{kind}.{pk}.{mac}",
        max_age=max_age,
        expires=None if max_age is None else _expires_header(now + max_age),
        path=config.path,
        domain=config.domain,
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def _is_guests(raw: str) -> bool:
    return raw.partition(".")[2].startswith("g.")


@functools.lru_cache(maxsize=VERIFIED_CACHE_SIZE)
def _verified(raw: str, session_key: str, address: str) -> Guard | None:
    """The guard ``raw`` if its MAC holds for this session and address.

    Remembered, since a browsing visitor sends the same guard again and again;
    the answer for the same arguments never changes until ``forget()``.
    """
    expires, _, rest = raw.partition(".")
    kind, _, rest = rest.partition(".")
    pk, _, mac = rest.rpartition(".")
    if not (expires.isascii() and expires.isdigit()) or kind not in ("u", "g"):
        return None
    if kind == "g" and pk:
        return None
    expected = _mac(guard_config(), expires, kind, pk, address, session_key)
    if not hmac.compare_digest(expected, mac):
        return None
    return Guard(expires=int(expires), user_pk=pk or None)


def _session_key(request: HttpRequest, config: GuardConfig) -> str:
    """The session key the browser holds, or will hold after this response.

    Reading ``modified`` loads nothing; only a session this request changed
    (a login, a logout) is asked for its new key.
    """
    session = getattr(request, "session", None)
    if session is not None and session.modified:
        return session.session_key or ""
    return request.COOKIES.get(config.session_cookie_name, "")


def _mac(
    config: GuardConfig,
    expires: str,
    kind: str,
    pk: str,
    address: str,
    session_key: str,
) -> str:
    message = f"{expires}|{kind}|{pk}|{address}|{session_key}".encode()
    return hashlib.blake2b(message, key=config.key, digest_size=16).hexdigest()


@functools.lru_cache(maxsize=4)
def _expires_header(at: int) -> str:
    """The ``expires`` Django would compute from ``max_age``; the same second
    serves every guard issued in it."""
    return http_date(at)

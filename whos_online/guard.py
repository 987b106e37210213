"""The guard cookie: proof that a visitor was recorded a moment ago.

While a valid guard is present the middleware sends nothing to Redis and
does not touch the session or the user. The guard is ``"<expires>.<kind>.<mac>"``
whose MAC (keyed BLAKE2b, with a key derived from ``SECRET_KEY``) covers the
visitor's session cookie and, for a guest, the address, so it holds only
for the identity it was issued to: logging in or out changes the session
key, and with it the guard is void. A guard that does not verify, for
whatever reason, counts as absent.

This is the hot path of every request, so what it needs from settings is
read once and cached until a setting changes.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import time
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from whos_online.addresses import client_address
from whos_online.conf import conf

# Longer than any guard we write; a bigger cookie is not looked at.
MAX_GUARD_LENGTH = 64


@dataclass(frozen=True)
class GuardConfig:
    cookie_name: str
    session_cookie_name: str
    key: bytes


@functools.cache
def guard_config() -> GuardConfig:
    """Cleared by ``signals.forget_cached_settings`` when a setting changes."""
    return GuardConfig(
        cookie_name=conf.GUARD_COOKIE_NAME,
        session_cookie_name=settings.SESSION_COOKIE_NAME,
        key=hashlib.blake2b(
            settings.SECRET_KEY.encode(), person=b"whos_online.grd", digest_size=32
        ).digest(),
    )


def is_guarded(request: HttpRequest) -> bool:
    """Whether the request carries a valid guard for the current visitor."""
    config = guard_config()
    raw = request.COOKIES.get(config.cookie_name)
    if not raw or len(raw) > MAX_GUARD_LENGTH:
        return False
    expires, _, rest = raw.partition(".")
    kind, _, mac = rest.partition(".")
    if not expires.isdigit() or int(expires) < time.time():
        return False
    if kind == "u":
        address = ""
    elif kind == "g":
        address = client_address(request.META) or ""
    else:
        return False
    session_key = _session_key(request, config)
    return hmac.compare_digest(_mac(config, expires, kind, address, session_key), mac)


def set_guard(
    response: HttpResponseBase, request: HttpRequest, guest_address: str | None
) -> None:
    """Spare this visitor the next ``WHOS_ONLINE_GUARD_SECONDS`` of records."""
    seconds = conf.GUARD_SECONDS
    if seconds <= 0:
        return
    config = guard_config()
    expires = str(int(time.time()) + seconds)
    kind = "u" if guest_address is None else "g"
    session_key = _session_key(request, config)
    mac = _mac(config, expires, kind, guest_address or "", session_key)
    response.set_cookie(
        config.cookie_name,
        f"{expires}.{kind}.{mac}",
        max_age=seconds,
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


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
    config: GuardConfig, expires: str, kind: str, address: str, session_key: str
) -> str:
    message = f"{expires}|{kind}|{address}|{session_key}".encode()
    return hashlib.blake2b(message, key=config.key, digest_size=16).hexdigest()

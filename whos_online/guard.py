"""The guard cookie: proof that a visitor was recorded a moment ago.

While a valid guard is present the middleware sends nothing to Redis and
does not touch the session or the user. The guard is a signed
``"<expires>.<kind>.<mac>"`` whose MAC covers the visitor's session cookie
(and, for a guest, the address), so it holds only for the identity it was
issued to: logging in or out changes the session key, and with it the guard
is void. A guard that does not verify, for whatever reason, counts as absent.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import time
from typing import Literal

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from whos_online.addresses import client_address
from whos_online.conf import conf

GuardKind = Literal["u", "g"]

# Longer than any guard we write; a bigger cookie is not looked at.
MAX_GUARD_LENGTH = 64


def is_guarded(request: HttpRequest) -> bool:
    """Whether the request carries a valid guard for the current visitor."""
    raw = request.COOKIES.get(conf.GUARD_COOKIE_NAME)
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
    expected = _mac(expires, kind, address, _session_key(request))
    return hmac.compare_digest(expected, mac)


def set_guard(
    response: HttpResponseBase, request: HttpRequest, guest_address: str | None
) -> None:
    """Spare this visitor the next ``WHOS_ONLINE_GUARD_SECONDS`` of records."""
    seconds = conf.GUARD_SECONDS
    if seconds <= 0:
        return
    expires = str(int(time.time()) + seconds)
    kind: GuardKind = "u" if guest_address is None else "g"
    mac = _mac(expires, kind, guest_address or "", _session_key(request))
    response.set_cookie(
        conf.GUARD_COOKIE_NAME,
        f"{expires}.{kind}.{mac}",
        max_age=seconds,
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def _session_key(request: HttpRequest) -> str:
    """The session key the browser holds, or will hold after this response.

    Reading ``modified`` loads nothing; only a session this request changed
    (a login, a logout) is asked for its new key.
    """
    session = getattr(request, "session", None)
    if session is not None and session.modified:
        return session.session_key or ""
    return request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")


def _mac(expires: str, kind: str, address: str, session_key: str) -> str:
    message = f"{expires}|{kind}|{address}|{session_key}".encode()
    digest = hmac.new(_signing_key(settings.SECRET_KEY), message, hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()[:16]).rstrip(b"=").decode()


@functools.cache
def _signing_key(secret: str) -> bytes:
    return hashlib.sha256(b"whos_online.guard:" + secret.encode()).digest()

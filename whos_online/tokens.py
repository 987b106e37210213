"""Room tokens: how a page names a room to the endpoints.

The endpoints take rooms only as tokens, so a visitor can follow a room the
site showed them, never name one it did not. A token is bound to the viewer
it was made for (or to nobody in particular, for a page a cache may keep),
expires after ``WHOS_ONLINE_ROOM_TOKEN_MAX_AGE`` and reveals neither room
nor viewer without the site's key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any

from django.core import signing
from django.utils.crypto import salted_hmac

from whos_online.conf import get_config
from whos_online.store import is_room_name

TOKEN_SALT = "whos_online.room"


def room_token(room: str, viewer: Any) -> str:
    """A token that lets ``viewer`` (and only them; anyone, for a page made
    for nobody in particular) follow ``room`` for
    ``WHOS_ONLINE_ROOM_TOKEN_MAX_AGE`` seconds.

    The endpoints take rooms only as tokens, so a visitor can follow a room
    the site showed them, never name one it did not. The room and the
    viewer are sealed inside, so a token (in a page a cache kept, say)
    reveals neither without the site's key.
    """
    sealed = _sealed(json.dumps([room, _viewer_id(viewer)]).encode())
    return signing.dumps(sealed, salt=TOKEN_SALT)


def room_from_token(token: str, viewer: Any) -> str | None:
    """The room in ``token`` if it was issued to ``viewer`` (or to nobody in
    particular) and is not too old."""
    try:
        sealed = signing.loads(
            token, salt=TOKEN_SALT, max_age=get_config().room_token_max_age
        )
        room, viewer_id = json.loads(_opened(sealed))
    except (signing.BadSignature, TypeError, ValueError):
        return None
    if viewer_id not in ("", _viewer_id(viewer)) or not is_room_name(room):
        return None
    return str(room)


def _viewer_id(viewer: Any) -> str:
    if viewer is not None and getattr(viewer, "is_authenticated", False):
        return str(viewer.pk)
    return ""


# A token's payload is sealed (XORed with a keystream of keyed BLAKE2b over
# a random nonce) before Django signs it: the signature keeps it whole, the
# seal keeps it unread.
NONCE_BYTES = 12


def _keystream(nonce: bytes, length: int) -> bytes:
    key = salted_hmac(TOKEN_SALT, "seal", algorithm="sha256").digest()
    blocks = (length + 63) // 64
    return b"".join(
        hashlib.blake2b(nonce + n.to_bytes(4, "big"), key=key).digest()
        for n in range(blocks)
    )[:length]


def _sealed(plain: bytes) -> str:
    nonce = secrets.token_bytes(NONCE_BYTES)
    return base64.urlsafe_b64encode(nonce + _mixed(nonce, plain)).decode()


def _opened(sealed: object) -> bytes:
    data = base64.urlsafe_b64decode(str(sealed))
    return _mixed(data[:NONCE_BYTES], data[NONCE_BYTES:])


def _mixed(nonce: bytes, data: bytes) -> bytes:
    """``data`` XORed with the keystream of ``nonce``: sealed, or opened."""
    stream = _keystream(nonce, len(data))
    return bytes(a ^ b for a, b in zip(data, stream, strict=True))

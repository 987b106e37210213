"""How much of a guest's address is kept: ``WHOS_ONLINE_GUEST_ADDRESSES``.

``"full"`` stores the address. ``"truncated"`` stores its /24 (IPv4) or /48
(IPv6) network, so guests of one network count as one. ``"hashed"`` stores a
keyed BLAKE2b hash of the address under a random salt that lives only in
Redis and expires after a day: the same guest counts once within a day, and
once a salt is gone nobody, the site included, can tell which address a
stored hash was.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable

from whos_online.addresses import truncate
from whos_online.conf import conf

SALT_SECONDS = 24 * 60 * 60
# A process asks Redis for the current salt at most this often.
SALT_REFRESH_SECONDS = 60 * 60


class SaltCache:
    """The current salt, fetched from Redis at most once an hour."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self._salt = b""
        self._fetched_at = float("-inf")

    def get(self, fetch: Callable[[str, int], bytes]) -> bytes:
        now = time.monotonic()
        with self._lock:
            if now - self._fetched_at >= SALT_REFRESH_SECONDS:
                self._salt = fetch(secrets.token_hex(16), SALT_SECONDS)
                self._fetched_at = now
            return self._salt


salts = SaltCache()


def stored_address(address: str, fetch_salt: Callable[[str, int], bytes]) -> str:
    """What is stored for a guest at ``address`` under the setting in force.

    ``fetch_salt(candidate, seconds)`` returns the salt in Redis, setting
    ``candidate`` for ``seconds`` if there is none.
    """
    mode = conf.GUEST_ADDRESSES
    if mode == "truncated":
        return truncate(address)
    if mode == "hashed":
        salt = salts.get(fetch_salt)
        digest = hashlib.blake2b(address.encode(), key=salt, digest_size=12)
        return f"h:{digest.hexdigest()}"
    return address

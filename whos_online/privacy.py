"""How much of a guest's address is kept: ``WHOS_ONLINE_GUEST_ADDRESSES``.

An IPv6 address is first cut to its network of ``WHOS_ONLINE_IPV6_PREFIX``
bits (a /64 by default: what one household, phone or server is given, and
what a stranger can rotate through at will), so one such network is one
guest in every mode. ``"full"`` stores the address (an IPv6 one as that
network's first address). ``"truncated"`` stores its /24 (IPv4) or /48
(IPv6) network, so guests of one network count as one. ``"hashed"`` stores a
keyed BLAKE2b hash of the address under a key of the day, derived from
``SECRET_KEY`` and the date (UTC, by Redis' clock): every process works out
the same key at once, the same guest counts once within a day, and nothing
kept in Redis reveals the key, so reading Redis or a backup of it does not
tell which address a stored hash was. Whoever holds ``SECRET_KEY`` can test
a guess of an address against a hash of any day.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from whos_online.addresses import network_of, truncate

# IPv6 addresses are cut to this many bits unless WHOS_ONLINE_IPV6_PREFIX says.
IPV6_PREFIX = 64


def daily_key(secret: bytes, day: int) -> bytes:
    """The key of hashed guest addresses on ``day`` (days since the epoch):
    derived from the site's secret, so every process agrees at once and
    nothing in Redis can undo the hash."""
    return hashlib.blake2b(
        day.to_bytes(4, "big"), key=secret, person=b"whos_online.gst", digest_size=32
    ).digest()


def stored_address(
    address: str,
    mode: str,
    key: Callable[[], bytes],
    ipv6_prefix: int = IPV6_PREFIX,
) -> str:
    """What is stored for a guest at ``address`` in ``mode``; ``key()``
    gives the key in force, and is called only for ``"hashed"``. An IPv6
    address counts by its network of ``ipv6_prefix`` bits."""
    if ":" in address and ipv6_prefix < 128:
        address = network_of(address, ipv6_prefix)
    if mode == "truncated":
        return truncate(address)
    if mode == "hashed":
        digest = hashlib.blake2b(address.encode(), key=key(), digest_size=12)
        return f"h:{digest.hexdigest()}"
    return address

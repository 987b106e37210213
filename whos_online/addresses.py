"""The client address of a request, validated and normalised.

``REMOTE_ADDR`` is the client unless the site says it runs behind reverse
proxies, either by how many there are (``WHOS_ONLINE_PROXY_COUNT``) or by
their networks (``WHOS_ONLINE_TRUSTED_PROXIES``). Only then is
``X-Forwarded-For`` read, from the right, since each proxy appends the
address it received the request from and anything further left may have been
written by the client. Anything malformed gives ``None``: the visitor is not
recorded, and nothing is raised.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping, Sequence

from whos_online.conf import IPNetwork

# Longer than any address: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%zone".
MAX_ADDRESS_LENGTH = 64
# A proxy chain longer than this is not a real one.
MAX_FORWARDED_LENGTH = 1024


def normalise(raw: object) -> str | None:
    """``raw`` as a canonical address (IPv6 compressed), or ``None``.

    IPv4 addresses mapped into IPv6 (``::ffff:192.0.2.1``), as dual-stack
    servers report them, become plain IPv4 so one guest is one member.
    """
    if not isinstance(raw, str) or not raw or len(raw) > MAX_ADDRESS_LENGTH:
        return None
    return _parse(raw)


# Every guarded guest request parses its address; the same few recur.
@functools.lru_cache(maxsize=4096)
def _parse(raw: str) -> str | None:
    try:
        address = ipaddress.ip_address(raw.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if address.scope_id is not None:
            address = ipaddress.IPv6Address(address.packed)
    return address.compressed


def truncate(address: str) -> str:
    """The /24 network of an IPv4 address, or the /48 of an IPv6 one."""
    return network_of(address, 24 if ":" not in address else 48)


# Every unguarded IPv6 guest's address is cut to its network; the same recur.
@functools.lru_cache(maxsize=4096)
def network_of(address: str, prefix: int) -> str:
    """The first address of ``address``'s network of ``prefix`` bits."""
    return ipaddress.ip_network(f"{address}/{prefix}", strict=False)[0].compressed


def client_address(
    meta: Mapping[str, object],
    proxy_count: int = 0,
    networks: tuple[IPNetwork, ...] = (),
) -> str | None:
    """The address of the client that sent a request with this ``META``,
    behind ``proxy_count`` proxies or proxies in ``networks``."""
    remote = normalise(meta.get("REMOTE_ADDR"))
    if remote is None or not (proxy_count or networks):
        return remote
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if not isinstance(forwarded, str) or len(forwarded) > MAX_FORWARDED_LENGTH:
        forwarded = None
    return _behind_proxies(remote, forwarded, proxy_count, networks)


# A guest's guard is checked against their address on every guarded request,
# and the same few headers recur.
@functools.lru_cache(maxsize=4096)
def _behind_proxies(
    remote: str,
    forwarded: str | None,
    proxy_count: int,
    networks: tuple[IPNetwork, ...],
) -> str | None:
    if networks and not _is_trusted(remote, networks):
        return remote  # the request did not come through a known proxy
    if forwarded is None:
        return None
    chain = [part.strip() for part in forwarded.split(",")] + [remote]
    if networks:
        return _first_untrusted_from_right(chain, networks)
    if len(chain) <= proxy_count:
        return None
    return normalise(chain[-proxy_count - 1])


def _first_untrusted_from_right(
    chain: Sequence[str], networks: tuple[IPNetwork, ...]
) -> str | None:
    for raw in reversed(chain):
        address = normalise(raw)
        if address is None:
            return None
        if not _is_trusted(address, networks):
            return address
    return None


def _is_trusted(address: str, networks: tuple[IPNetwork, ...]) -> bool:
    parsed = ipaddress.ip_address(address)
    return any(parsed in network for network in networks)

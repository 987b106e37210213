"""What a request's cookies say, read with nothing else: the session key
and the guard, and whether the guard spares the request a record.

Every request asks (:func:`remembered`, else :func:`judge`), so the
verdict on each guard cookie is kept by the process (see
:func:`verdict_on`); a :class:`~whos_online.visitors.Visit` is made only
when a record is due.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from django.http import HttpRequest

from whos_online import guard, locations
from whos_online.addresses import client_address
from whos_online.conf import Config
from whos_online.state import NEVER, BoundedMemo
from whos_online.store import Store


class Cookies:
    """What the request's cookies say, read with nothing else: the session
    key the browser holds (or will hold after this response), the guard if
    it was issued to this session (and, for a guest, this client address),
    and whether it spares the request a record, by Redis' time and data
    generation as this process learnt them in the past few seconds.

    Read by the request's one object (:class:`~whos_online.page.Page` is
    one), made when a record may be due or an output asks; the guarded path
    asks :func:`remembered` alone, where each Python call costs about as
    much as the work it wraps.
    """

    __slots__ = ("guard", "guarded", "request", "session_key", "store")

    def __init__(
        self,
        request: HttpRequest,
        store: Store,
        session_key: str | None = None,
        verdict: Verdict | None = None,
    ) -> None:
        """``session_key``: the one the request came with, where the view
        may have changed it since (else :func:`session_key_of`);
        ``verdict``: the one reached on its guard for that key, if any
        (:func:`judge`), else it is reached now."""
        if session_key is None:
            session_key = session_key_of(request, store.config)
        self.request = request
        self.store = store
        """The store read with, which the records and rooms ask too."""
        self.session_key = session_key
        if verdict is None:
            verdict = judge(request, store, session_key)
        self.guard = None if verdict is None else verdict.guard
        self.guarded = verdict is not None and is_held(verdict, store)


def session_key_of(request: HttpRequest, config: Config) -> str:
    """The session key the browser holds (or will hold after this response):
    its cookie's, or, for a session this request changed (a login, a
    logout), the new one. Reading ``modified`` loads nothing."""
    session = getattr(request, "session", None)
    if session is not None and session.modified:
        return session.session_key or ""
    return request.COOKIES.get(config.session_cookie_name, "")


def remembered(request: HttpRequest, store: Store) -> Verdict | None:
    """The verdict the process keeps on the request's guard, if it was
    reached for this very cookie, session key and socket address and
    spares the request a record until a deadline not passed: a few
    dictionary lookups and one clock reading, nothing built, the guarded
    path. Else ``None``, and :func:`judge` decides. A session an earlier
    middleware changed is the view's change to the middleware: seen after
    it (:func:`session_changed`)."""
    config = store.config
    cookies = request.COOKIES
    raw = cookies.get(config.guard_cookie_name)
    if not raw:
        return None
    verdict: Verdict | None = store.state.guards.get(raw)
    if (
        verdict is not None
        and verdict.session_key == cookies.get(config.session_cookie_name, "")
        and (
            verdict.sources is None  # a user's
            or verdict.sources == request.META.get("REMOTE_ADDR")
        )
        and time.monotonic() < verdict.deadline
    ):
        return verdict
    return None


def judge(request: HttpRequest, store: Store, session_key: str) -> Verdict | None:
    """The verdict on the request's guard cookie for this visitor (``None``
    without one): the one the process keeps for it, if it was reached for
    the same session key and (for a guest) the same address sources, else
    found now (:func:`verdict_on`). Whether it spares the request a record:
    :func:`is_held`."""
    config = store.config
    raw = request.COOKIES.get(config.guard_cookie_name)
    if not raw:
        return None
    memo = store.state.guards
    verdict = memo.get(raw)
    if (
        verdict is None
        or verdict.session_key != session_key
        or verdict.sources is not None  # a guest's: bound to an address
        and verdict.sources != request.META.get("REMOTE_ADDR")
        and not same_sources(verdict.sources, request.META, config)
    ):
        verdict = verdict_on(request, config, memo, raw, session_key)
    return verdict


def is_held(verdict: Verdict, store: Store) -> bool:
    """Whether the guard ``verdict`` found spares its visitor a record now,
    by Redis' time and data generation as this process learnt them in the
    past few seconds (its deadline moved on when it has passed)."""
    found = verdict.guard
    if found is None:
        return False
    now = time.monotonic()
    if now >= verdict.deadline:  # learnt too long ago, or run out
        verdict.deadline = store.state.clock.deadline(found.data_label, found.expires)
    return now < verdict.deadline


class Verdict:
    """What a guard cookie was found to be, and for what: the session key
    and, for a guest, the sources of the address (see :func:`verdict_on`)."""

    __slots__ = ("deadline", "guard", "quiet", "session_key", "sources")

    def __init__(
        self, session_key: str, sources: object, found: guard.Guard | None
    ) -> None:
        self.session_key = session_key
        self.sources = sources
        self.guard = found
        self.deadline = NEVER
        """Until when, on the monotonic clock, the guard spares its visitor
        a record, by what the process knew when it last looked
        (:meth:`~whos_online.state.ServerClock.deadline`); moved on when it
        looks again."""
        self.quiet: object = None
        """The path (its :func:`~whos_online.marks.path_key`) the guard was
        last found to know the marks of, after a page of it: the guarded
        path's check after the view, remembered for a page of that path
        again (see :func:`~whos_online.page.is_quiet`)."""


def verdict_on(
    request: HttpRequest,
    config: Config,
    memo: BoundedMemo[str, Verdict],
    raw: str,
    session_key: str,
) -> Verdict:
    """The guard ``raw`` if it was issued to this session (and, for a guest,
    to the client's address), as a verdict ``memo`` keeps with what it was
    reached for: the session key and, for a guest, the headers the address
    is read from. While those are the same, the verdict stands without a
    MAC or an address parsed.

    Only a guard we issued is kept: anyone can send cookies, and a stranger's
    must not push out what the process keeps for the visitors it guards."""
    found = guard.read(config, raw, session_key, lambda: guard_address(request, config))
    sources = address_sources(request.META, config) if guard.is_guests(raw) else None
    verdict = Verdict(session_key, sources, found)
    return verdict if found is None else memo.put(raw, verdict)


def same_sources(sources: object, meta: Mapping[str, object], config: Config) -> bool:
    """Whether a guest's verdict reached with ``sources`` holds for a request
    of ``meta`` (a user's guard is bound to no address)."""
    # Without proxies the sources are the socket's address, which the caller
    # compares first.
    return sources == address_sources(meta, config)


def address_sources(meta: Mapping[str, object], config: Config) -> object:
    """What a guest's address is read from: the same sources, the same
    address."""
    if config.proxy_count or config.trusted_networks:
        return meta.get("REMOTE_ADDR"), meta.get("HTTP_X_FORWARDED_FOR")
    return meta.get("REMOTE_ADDR")


def mark_of(location: str) -> str:
    """What the guard keeps of a location: its label, so moving between
    pages of one kind (thread to thread) is not recorded until the guard
    runs out, when the link is brought up to date."""
    return guard.mark(location.partition(locations.SEPARATOR)[0])


def session_changed(request: HttpRequest, session_key: str) -> bool:
    """Whether the view gave the browser a session other than
    ``session_key`` (a login or a logout cycles the key), so the guard no
    longer fits it."""
    session = getattr(request, "session", None)
    return (
        session is not None
        and session.modified
        and (session.session_key or "") != session_key
    )


def guard_address(request: HttpRequest, config: Config) -> str:
    """What a guest's guard is bound to: the client's address (whatever the
    client wrote into the headers besides does not matter); a guest whose
    address changes is recorded again. Without proxies it is the socket's
    address as the server gives it, which needs no parsing: a guest's guard
    is only valid for an address it was issued to."""
    meta = request.META
    if config.proxy_count or config.trusted_networks:
        address = client_address(meta, config.proxy_count, config.trusted_networks)
        return address or ""
    remote = meta.get("REMOTE_ADDR")
    return remote if isinstance(remote, str) else ""

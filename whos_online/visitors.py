"""Who a request comes from, worked out once, and their visit recorded.

A :class:`Visit` is made for a request whose guard does not hold (kept on
the request's :class:`~whos_online.page.Page`, where rooms and views find
it through :func:`~whos_online.page.visit_of`), from what the
middleware read of the cookies (:class:`~whos_online.seen.Cookies`). It
resolves the :class:`Visitor` (kind, stored member, user, address) and record
them, before the view runs, so the page being rendered already counts its
own visitor. After the view, a session that changed hands (a login, a
logout) records the new identity at once, and the guard is issued.
"""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal

from django.http import HttpResponseBase

from whos_online import guard, locations, signals
from whos_online.addresses import client_address
from whos_online.bots import bot_name
from whos_online.gate import recorded_hidden
from whos_online.marks import answered, rooms_mark, rooms_named
from whos_online.privacy import daily_key, stored_address
from whos_online.seen import Cookies, guard_address, mark_of, session_changed
from whos_online.store import Kind, Raised, Sighting, Stamp

# What a heartbeat did: see Visit.heartbeat.
Heartbeat = Literal["refused", "fresh", "recorded", "failed"]


@dataclass(frozen=True)
class Visitor:
    kind: Kind
    member: str
    """What is stored: the user's primary key, the guest's address in the
    form ``WHOS_ONLINE_GUEST_ADDRESSES`` says, or the bot's name."""
    address: str | None = None
    """A guest's address as the request gave it (the guard covers it)."""

    @property
    def is_person(self) -> bool:
        return self.kind != "bots"

    @property
    def user_pk(self) -> str | None:
        return self.member if self.kind in ("users", "hidden") else None


class Visit:
    """A request's visitor and what was recorded of them.

    Made when a record is due, or when rooms, views or a login need the
    visitor: a guarded request makes none (the middleware reads the cookies
    into a :class:`Cookies` and stops there).
    """

    stamp: Stamp | None = None
    """What Redis said when the visitor was recorded by this request."""
    recorded: Visitor | None = None

    def __init__(self, seen: Cookies) -> None:
        self.request = seen.request
        self.store = store = seen.store
        self.config = store.config
        self.session_key, self.guard = seen.session_key, seen.guard
        self.where = "" if seen.guard is None else seen.guard.where
        """The mark of the user's location as last written, as far as
        this browser knows."""
        self.rooms = "" if seen.guard is None else seen.guard.rooms
        """The mark of the rooms the visitor was last recorded in, as far as
        this browser knows."""
        self.rooms_known = seen.guard is not None
        """Whether the guard told the rooms the device is in."""

    @property
    def is_guarded(self) -> bool:
        """Whether the guard spares a record now (the clock may have been
        asked since the cookies were read)."""
        found = self.guard
        return found is not None and found.holds(self.store.state.clock)

    @functools.cached_property
    def address(self) -> str | None:
        config = self.config
        return client_address(
            self.request.META, config.proxy_count, config.trusted_networks
        )

    @functools.cached_property
    def visitor(self) -> Visitor | None:
        """The visitor, or ``None`` for a guest without a usable address;
        worked out on first use.

        A user is who the session says, never who a cookie names: cookies
        kept from a session since logged out must not bring its user back.
        """
        return self._resolve()

    def _resolve(self) -> Visitor | None:
        user = getattr(self.request, "user", None)
        if user is not None and user.is_authenticated:
            kind: Kind = "hidden" if self._hides(user) else "users"
            return Visitor(kind, str(user.pk))
        if self.config.detect_bots:
            user_agent = self.request.META.get("HTTP_USER_AGENT", "")
            name = bot_name(user_agent) if isinstance(user_agent, str) else None
            if name is not None:
                return Visitor("bots", name)
        if self.address is None:
            return None
        return Visitor("guests", self.guest_member(self.address), self.address)

    def _hides(self, user: Any) -> bool:
        """Whether the user is recorded hidden, as the gate says
        (:func:`~whos_online.gate.recorded_hidden`: the site's rule, or
        their own choice, read from the database whenever they are
        recorded, whatever Redis holds). While their guard holds (a room
        page, a beacon), the guard says what their last record read, at
        most a guard period ago; every output asks the gate meanwhile."""
        found = self.guard
        if found is not None and not found.is_guests and self.is_guarded:
            return found.is_hidden
        return recorded_hidden(user, self.config)

    def guest_member(self, address: str) -> str:
        config = self.config
        return stored_address(
            address,
            config.guest_addresses,
            lambda: daily_key(config.guard_key, self.store.today()),
            config.ipv6_prefix,
        )

    def record(self) -> None:
        """Record the visitor now (bots at most once per guard period per
        process, since they keep no cookies)."""
        visitor = self.visitor
        if visitor is None:
            return
        if not visitor.is_person and not self.store.state.bots.allows(
            visitor.member, self.config.guard_seconds
        ):
            return
        self._record_as(visitor)

    def record_new_identity(self) -> None:
        """The view logged someone in or out: record who they are now, and
        take the guest they were off the guests. This process's shared
        snapshots are dropped, so the page they are sent to next (served
        here) shows them as they are now."""
        self.store.state.snapshots.clear()
        before, stamp = self.recorded, self.stamp
        if before is not None:
            was_guest = before.kind == "guests"
        else:
            was_guest = self.guard is not None and self.guard.is_guests
        # What the guest raised, arriving with this very request: a hidden
        # user's arrival moves no figure, so it is taken back.
        raised = stamp.raised if stamp is not None and was_guest else None
        was_user = before is not None and before.user_pk is not None
        if before is None and self.guard is not None:
            was_user = not self.guard.is_guests
        # The guard was the old identity's: it says nothing of the new one.
        self.guard = None
        self.session_key = Cookies(self.request, self.store).session_key
        # A new identity: where it is stored, and in which rooms, is not known.
        self.where = self.rooms = ""
        self.rooms_known = False
        self.visitor = after = self._resolve()
        self.stamp = self.recorded = None
        if after is None or not after.is_person:
            return
        left_guest = ""
        if was_guest and after.kind != "guests" and self.address is not None:
            left_guest = before.member if before else self.guest_member(self.address)
        logged_out = was_user and after.kind == "guests"
        takes_back = raised if after.kind == "hidden" else None
        self._record_as(
            after, left_guest=left_guest, logged_out=logged_out, takes_back=takes_back
        )

    def _record_as(
        self,
        visitor: Visitor,
        left_guest: str = "",
        *,
        logged_out: bool = False,
        takes_back: Raised | None = None,
    ) -> None:
        device = self._device(visitor)
        if logged_out:
            # Counted today as the user they were, not once more as a guest.
            sighting = Sighting.after_logout(visitor.member)
        elif left_guest:
            sighting = Sighting.login(
                visitor.kind,
                visitor.member,
                device=device,
                left_guest=left_guest,
                takes_back=takes_back,
            )
        else:
            sighting = Sighting.page_view(
                visitor.kind,
                visitor.member,
                device=device,
                last_recorded=self._last_recorded(visitor),
            )
        self.stamp = self.store.record(sighting)
        self._note_recorded(visitor)

    def record_location(self, response: HttpResponseBase) -> None:
        """After a 2xx page view: keep where a user is, if the page has a
        label and it is not what their guard says was last written. Only a
        path that answered is ever kept, so no link to it can be planted.
        One round trip; the guard then knows the new location."""
        visitor = self.recorded or self.visitor
        if visitor is None or visitor.user_pk is None:
            return
        where = locations.location_of(self.request, self.store.state.locations)
        if not where or mark_of(where) == self.where and self.stamp is None:
            return
        if self.store.set_location(visitor.member, where):
            self.where = mark_of(where)
            self.note_rooms_marked(self.rooms, response)

    def _last_recorded(self, visitor: Visitor) -> float | None:
        """When the visitor was last recorded, by Redis' clock, if their guard
        (run out, but verified) says so: it was issued to them then (to this
        session, whose user the session, not the guard, says)."""
        found = self.guard
        if found is None or found.is_guests != (visitor.kind == "guests"):
            return None
        return found.expires - self.config.guard_seconds

    def heartbeat(self, least_interval: float, fresh_for: float) -> Heartbeat:
        """The logged-in user's page is open: ``"refused"`` if they were
        recorded less than ``least_interval`` seconds ago, ``"fresh"`` if
        less than ``fresh_for`` (their status cannot have turned "away" by
        the next heartbeat), else recorded now, or ``"failed"`` when Redis
        could not be reached.

        Their guard, which a heartbeat renews (:meth:`issue_guard`), says
        when they were last recorded, so neither answer asks Redis, and a
        record is a renewal. Whatever the cookies say, this process records
        a user's heartbeats at most once per ``least_interval``
        (``State.heartbeats``): a client that drops its guard is refused
        too, and a refusal writes nothing."""
        visitor = self.visitor
        assert visitor is not None and visitor.user_pk is not None
        last = self._last_recorded(visitor)
        if last is not None and self.is_guarded:
            age = self.store.state.clock.now() - last
            if age < least_interval:
                return "refused"
            if age < fresh_for:
                return "fresh"
        if self.store.is_failing(visitor.member):
            return "failed"  # and the server's limit is left as it was
        if not self.store.state.heartbeats.allows(visitor.member, least_interval):
            return "refused"
        sighting = Sighting.heartbeat(
            visitor.kind,
            visitor.member,
            device=self._device(visitor),
            last_recorded=last,
        )
        self.stamp = self.store.record(sighting)
        if self.stamp is None:
            return "failed"
        self._note_recorded(visitor)
        return "recorded"

    def _note_recorded(self, visitor: Visitor) -> None:
        self.recorded = visitor
        self._announce_arrival()

    def _announce_arrival(self) -> None:
        visitor, stamp = self.recorded, self.stamp
        if visitor and visitor.user_pk and stamp and stamp.entered:
            hidden = visitor.kind == "hidden"
            signals.announce(
                signals.user_came_online, user_pk=visitor.user_pk, hidden=hidden
            )

    def _device(self, visitor: Visitor) -> str:
        if visitor.user_pk is None or not self.session_key:
            return ""
        return self.store.device_of(self.session_key)

    @property
    def device(self) -> str:
        """The visitor's device: a keyed hash of a user's session; ``""``
        for a guest, whose address is their one device."""
        visitor = self.visitor
        return "" if visitor is None else self._device(visitor)

    @property
    def identity_changed(self) -> bool:
        return session_changed(self.request, self.session_key)

    def after_view(self, response: HttpResponseBase) -> None:
        """What the view's answer leaves to write of the visitor: a new
        identity, their guard, and after a 2xx a user's location."""
        if self.identity_changed:
            self.record_new_identity()
        self.issue_guard(response)
        if answered(response):
            self.record_location(response)

    def enter_rooms(self, rooms: AbstractSet[str]) -> None:
        """The device is in ``rooms`` now (none: in no room): one round
        trip; a failure is logged, never raised, and costs nobody else
        anything. Crawlers are counted on the site, never in rooms: a
        crawler fetching every thread would fill the rooms people read.
        :meth:`note_rooms` then tells the guard."""
        visitor = self.visitor
        if visitor is not None and visitor.is_person:
            was = rooms_named(self.rooms) if self.rooms_known else None
            self.store.enter_rooms(
                visitor.kind, visitor.member, self.device, sorted(rooms), was
            )

    def issue_guard(self, response: HttpResponseBase) -> None:
        """Spare the visitor just recorded the next guard period of records."""
        visitor, stamp = self.recorded, self.stamp
        if stamp is None or visitor is None or not visitor.is_person:
            return
        hidden = visitor.kind == "hidden"
        self._issue(response, visitor.kind, stamp.now, stamp.data_label, hidden)

    def note_rooms(self, rooms: AbstractSet[str], response: HttpResponseBase) -> None:
        """The visitor was just recorded in ``rooms``: their guard says so
        from now on (a guard that holds keeps its expiry)."""
        self.note_rooms_marked(rooms_mark(rooms), response)

    def note_rooms_marked(self, rooms: str, response: HttpResponseBase) -> None:
        """:meth:`note_rooms`, by the mark of the rooms (``""``: none)."""
        self.rooms = rooms
        visitor, found = self.visitor, self.guard
        if self.stamp is not None:
            self.issue_guard(response)
        elif visitor is not None and visitor.is_person and self.is_guarded:
            assert found is not None
            issued = found.expires - self.config.guard_seconds
            self._issue(
                response, visitor.kind, issued, found.data_label, found.is_hidden
            )

    def _issue(
        self,
        response: HttpResponseBase,
        kind: Kind,
        issued: float,
        generation: str,
        hidden: bool,
    ) -> None:
        guard.issue(
            self.config,
            response,
            session_key=self.session_key,
            guest_address=guard_address(self.request, self.config)
            if kind == "guests"
            else None,
            where=self.where,
            rooms=self.rooms,
            hidden=hidden,
            server_now=issued,
            generation=generation,
            secure=self.request.is_secure(),
        )

"""Each user's status and last seen, as a viewer may learn them: the badges
and status filters of a page, ``{% presence_list %}`` and the API.

Every answer goes through the viewer's :class:`~whos_online.gate.Gate`. On a
page made through the middleware, every badge is read from the page's one
snapshot (:func:`whos_online.roster.snapshot_for`), so a thread of twenty
posts costs one round trip for all its badges.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import pgettext_lazy

from whos_online import page, roster
from whos_online.conf import get_config
from whos_online.gate import Gate, Grade, Status, grade_label
from whos_online.roster import gate_of, snapshot_for
from whos_online.store import LastSeen, Snapshot, get_store
from whos_online.users import as_datetime, users_in_order
from whos_online.visibility import Choices

STATUS_LABELS = {
    "online": pgettext_lazy("a user's presence status", "online"),
    "away": pgettext_lazy("a user's presence status", "away"),
    "offline": pgettext_lazy("a user's presence status", "offline"),
    "unknown": pgettext_lazy("a user's presence status", "not shown"),
}


def badge_html(status: Status) -> SafeString:
    """The markup of ``{% online_badge %}`` for ``status``: a dot styled by
    the shipped stylesheet, the status in the page's language for screen
    readers and as its tooltip; nothing where the viewer may not learn it."""
    if status == "unknown":
        return SafeString("")
    label = STATUS_LABELS[status]
    return format_html(
        '<span class="whos-online-badge whos-online-badge-{}" title="{}">'
        '<span class="whos-online-visually-hidden">{}</span></span>',
        status,
        label,
        label,
    )


@dataclass(frozen=True)
class UserPresence:
    user: Any
    status: Status
    """``online``, ``away``, ``offline``, or ``unknown`` where the viewer
    may not learn it: a code for CSS classes and tests."""
    last_seen: datetime | None
    """When they were last seen, within ``WHOS_ONLINE_LAST_SEEN_DAYS``, if
    the viewer may learn it to the minute."""
    grade: Grade | None = None
    """Else how long ago, roughly, if the viewer may learn that."""

    @property
    def label(self) -> str:
        """The status in the active language, for people to read."""
        return str(STATUS_LABELS[self.status])

    @property
    def last_seen_label(self) -> str:
        """How long ago, roughly, in the active language ("" if exact)."""
        return grade_label(self.grade)


def presence_of(
    users: Iterable[Any],
    *,
    viewer: Any = None,
    request: HttpRequest | None = None,
    badge: bool = False,
) -> list[UserPresence]:
    """Status and last-seen time of each user as the gate lets the viewer
    learn them (``badge``: as a badge shows them), in one Redis round trip
    (per thousand users) and one query; ``offline`` for everyone if Redis
    cannot be read."""
    users = list(users)
    gate = gate_of(viewer, request)
    found = get_store().last_seen_many(u.pk for u in users)
    if found is None:
        return [UserPresence(user, "offline", None) for user in users]
    choices = gate.chosen(str(user.pk) for user in users)
    newly_hidden = {pk for pk in choices.invisible if pk in found.seen}
    hidden = found.hidden | choices.invisible
    refused = gate.refused(users)
    visible = _visible_users(len(newly_hidden - found.hidden))
    answers = [
        _presence(user, found, hidden, refused, choices, gate, visible, False)
        for user in users
    ]
    if request is not None:  # later |last_seen filters of the page ask no more
        seen = page.of(request).badges
        seen.update((f"seen:{answer.user.pk}", answer) for answer in answers)
    if badge:
        return [
            _presence(user, found, hidden, refused, choices, gate, visible, True)
            for user in users
        ]
    return answers


def _visible_users(newly_hidden: int) -> int:
    """How many users online are visible, asked only when the site lists
    names from a least number on (one round trip more)."""
    if get_config().min_names_listed <= 0:
        return 0
    found = get_store().snapshot(0)
    return 0 if found is None else found.counts.users - newly_hidden


def _presence(
    user: Any,
    found: LastSeen,
    hidden: AbstractSet[str],
    refused: AbstractSet[str],
    choices: Choices,
    gate: Gate,
    visible_users: int,
    badge: bool,
) -> UserPresence:
    pk = str(user.pk)
    status, exact, grade = gate.presence(
        found.seen.get(pk),
        found.ever.get(pk),
        pk in hidden,
        pk in choices.hide_last_seen,
        found.now,
        visible_users,
        refused=pk in refused,
        badge=badge,
    )
    return UserPresence(
        user, status, None if exact is None else as_datetime(exact), grade
    )


def badge_of(user: Any) -> UserPresence:
    """A user's status and last-seen time as a badge beside their name shows
    them: hidden users are ``offline``, whoever looks.

    On a page made through the middleware, every badge is read from the
    page's one snapshot of the users online (shared with the widget), so a
    thread of twenty posts costs one round trip for all its badges, and one
    query for the choices of the users listed; a user not online within the
    window is ``offline`` with no ``last_seen``. Elsewhere (an email, a
    command), one round trip per user, as for a visitor not logged in.
    """
    made = page.current()
    if made is None:
        return presence_of([user], badge=True)[0]
    member = str(user.pk)
    badge = made.badges.get(member)
    if badge is None:
        badge = made.badges[member] = _badge_from_page(user, made)
    return badge


def _badge_from_page(user: Any, made: page.Page) -> UserPresence:
    gate = made.gate_used()
    snapshot = _page_snapshot(made.request)
    if snapshot is None:
        return UserPresence(user, "offline", None)
    if made.choices is None:
        made.choices = gate.chosen(m for m, _ in snapshot.users)
        if gate.judges_each_user:
            online = users_in_order(snapshot.users)
            made.refused = frozenset(gate.refused([o.user for o in online]))
    choices, refused = made.choices, made.refused
    member = str(user.pk)
    seen = dict(snapshot.users).get(member)
    if seen is None and not _lists_everyone(snapshot):
        return presence_of([user], request=made.request, badge=True)[0]
    visible = snapshot.counts.users - len(choices.invisible | refused)
    found = LastSeen(snapshot.now, {} if seen is None else {member: seen}, frozenset())
    return _presence(
        user, found, choices.invisible, refused, choices, gate, visible, badge=True
    )


def seen_of(user: Any) -> UserPresence:
    """When ``user`` was last seen, beyond the window too, as the page's
    viewer may learn it: the badge's answer for a user online; for one who
    is not, one round trip (and one query) of their own, unless a
    ``presence_list`` of the page asked already."""
    badge = badge_of(user)
    made = page.current()
    if badge.status != "offline" or made is None or not get_config().last_seen_days:
        return badge
    key = f"seen:{user.pk}"
    found = made.badges.get(key)
    if found is None:
        found = made.badges[key] = presence_of([user], request=made.request)[0]
    return found


def _page_snapshot(request: HttpRequest) -> Snapshot | None:
    """The page's site-wide snapshot (with hidden users or not) if it lists
    every user online, else one listing up to ``BADGE_NAMES``."""
    taken = page.of(request).snapshots
    for kept in (taken.get((None, False)), taken.get((None, True))):
        if kept is not None and _lists_everyone(kept[1]):
            return kept[1]
    return snapshot_for(roster.BADGE_NAMES, None, False, request)


def _lists_everyone(snapshot: Snapshot) -> bool:
    counts = snapshot.counts
    return "users" not in counts.estimated and len(snapshot.users) >= counts.users


def in_room_as_seen(
    user: Any, visible: AbstractSet[str], hidden: AbstractSet[str], viewer: Any
) -> bool:
    """Whether ``viewer`` may learn that ``user``, found in a room's sets
    (``visible``, ``hidden``), is there: the gate's word."""
    return Gate(viewer).sees_in_room(user, visible, hidden, lambda: _visible_users(0))

"""The one gate: what a viewer may learn about each user online.

Every output (the widget, the JSON and fragment endpoints, the public page,
room boxes, badges and status filters, ``presence_list``, the Python API)
asks a :class:`Gate` made for its viewer, and applies no visibility rule of
its own. The gate applies, in this order:

- **hidden users**: a user who chose to appear offline (read from the
  database, which wins over anything Redis holds, and taken as chosen when
  the database cannot say), whom ``WHOS_ONLINE_IS_HIDDEN`` hides, or whom
  Redis holds among the hidden, is shown to active staff only, marked
  hidden; to everyone else they look exactly like a user who is offline,
  and count as ``WHOS_ONLINE_PUBLIC_HIDDEN_COUNT`` says. A badge shows them
  offline to staff too. A user is recorded among the hidden as
  :func:`recorded_hidden` says;
- **the audience**: ``WHOS_ONLINE_NAMES_VISIBLE_TO`` says who may learn who
  is online; to the others no name is listed and no status is known;
- **the minimum**: below ``WHOS_ONLINE_MIN_NAMES_LISTED`` visible users
  online, no name is listed and no status is known, so a handful of people
  cannot be singled out;
- **the site's own rule**: ``WHOS_ONLINE_CAN_SEE`` says, for a batch of
  users, whom this viewer may see (friends only, one team, blocked users);
  to this viewer the others look exactly like users who are offline, and
  are not counted, hidden or not. It binds staff too (all but the staff
  page): a hidden user it refuses is neither shown nor counted to them. A
  rule that raises refuses everyone it was asked about;
- **last seen**: ``WHOS_ONLINE_LAST_SEEN_SHOWN`` shows the exact time,
  only how long ago roughly (recently, within a week, within a month, a
  long time ago), or nothing; a user who hides their own last seen is shown
  roughly, and sees others only roughly (as Telegram does it); staff see
  the exact time. Being listed among the users seen today tells when a
  user was last seen: only a viewer who may learn the exact time is told.

Counts agree with the names a viewer is given: a user is taken off a count
only where the gate took them off the list (a viewer's own choice, read
with the others', is no one's count).

A response that Django's cache may keep for others is made for nobody in
particular: its gate is an anonymous viewer's (see :mod:`whos_online.page`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any, Literal

from django.utils.translation import pgettext_lazy

from whos_online import visibility
from whos_online.conf import Config, get_config
from whos_online.store import Counts, Today, get_store
from whos_online.visibility import Choices

Status = Literal["online", "away", "offline", "unknown"]
Grade = Literal["recently", "within-a-week", "within-a-month", "long-ago"]
DAY = 86400
GRADES: tuple[tuple[float, Grade], ...] = (
    (3 * DAY, "recently"),
    (7 * DAY, "within-a-week"),
    (30 * DAY, "within-a-month"),
)
GRADE_LABELS = {
    "recently": pgettext_lazy("last seen", "last seen recently"),
    "within-a-week": pgettext_lazy("last seen", "last seen within a week"),
    "within-a-month": pgettext_lazy("last seen", "last seen within a month"),
    "long-ago": pgettext_lazy("last seen", "last seen a long time ago"),
}


def is_active_staff(user: Any) -> bool:
    """Who may see hidden users and the staff page."""
    return bool(getattr(user, "is_staff", False) and getattr(user, "is_active", False))


def hidden_by_the_site(user: Any, config: Config | None = None) -> bool:
    """Whether ``WHOS_ONLINE_IS_HIDDEN`` hides ``user``."""
    rule = (config or get_config()).is_hidden_function
    return rule is not None and bool(rule(user))


def recorded_hidden(user: Any, config: Config | None = None) -> bool:
    """Whether ``user`` is recorded among the hidden users: the site's rule
    hides them, or they chose to appear offline (one query; taken as
    chosen when the database cannot say)."""
    config = config or get_config()
    return hidden_by_the_site(user, config) or (
        config.allow_invisible and visibility.is_invisible(user)
    )


def in_audience(viewer: Any) -> bool:
    """Whether ``WHOS_ONLINE_NAMES_VISIBLE_TO`` lets ``viewer`` learn who is
    online."""
    audience = get_config().names_visible_to
    if audience == "everyone":
        return True
    if audience == "users":
        return bool(getattr(viewer, "is_authenticated", False))
    return audience == "staff" and is_active_staff(viewer)


class Gate:
    """What ``viewer`` (a user, an anonymous user or ``None``) may learn."""

    def __init__(self, viewer: Any, *, staff_page: bool = False) -> None:
        self.viewer = viewer
        self.shows_hidden = staff_page or is_active_staff(viewer)
        """Whether hidden users are shown (marked) and counted apart."""
        self.in_audience = in_audience(viewer)
        self.hides_own_last_seen = False
        """Whether the viewer hides their own last seen, and so sees others'
        only roughly: read by :meth:`chosen`, before any last seen is told."""
        self._chosen: dict[frozenset[str], Choices] = {}
        self._own: Choices | None = None
        self.can_see = None if staff_page else get_config().can_see_function
        """The site's rule of whom each viewer may see, if it has one (the
        staff page, which only staff reach, shows everyone)."""

    @property
    def judges_each_user(self) -> bool:
        """Whether the site's rule must see the users to say who is shown."""
        return self.can_see is not None

    @property
    def kind(self) -> tuple[bool, bool, bool] | None:
        """What sets this viewer apart: viewers of one kind, shown the same
        snapshot and the same users' choices, learn the same (whether they
        see hidden users, may learn names, hide their own last seen, as
        read by :meth:`chosen`); ``None`` where the site's rule judges each
        viewer alone."""
        if self.judges_each_user:
            return None
        return (self.shows_hidden, self.in_audience, self.hides_own_last_seen)

    @property
    def personal(self) -> bool:
        """Whether this viewer may learn more than a visitor who is not
        logged in: an answer for them must not be kept for others."""
        return (
            self.shows_hidden
            or self.judges_each_user
            or (self.in_audience and not in_audience(None))
        )

    @property
    def tells_of_hidden(self) -> bool:
        """Whether hidden users reach this viewer in any form: listed (to
        staff), or counted (``WHOS_ONLINE_PUBLIC_HIDDEN_COUNT``)."""
        return self.shows_hidden or get_config().public_hidden_count != "never"

    def refused(self, users: Sequence[Any]) -> set[str]:
        """The keys of ``users`` this viewer may not see by the site's rule
        (one call of it, whatever it queries); all of them if it fails."""
        rule = self.can_see
        if rule is None or not users:
            return set()
        asked = {str(user.pk) for user in users}
        try:
            allowed = {str(user.pk) for user in rule(self.viewer, list(users))}
        except Exception as exc:  # the site's code: privacy fails closed
            get_store().state.refused.warning(
                "can_see",
                "WHOS_ONLINE_CAN_SEE failed (%s: %s), so nobody it was asked "
                "about is shown.",
                type(exc).__name__,
                exc,
            )
            return asked
        return asked - allowed

    def shows_names(self, visible_users: int) -> bool:
        """Whether names and statuses are shown, with ``visible_users``
        online that this viewer may see."""
        return self.in_audience and visible_users >= get_config().min_names_listed

    @property
    def shows_hidden_count(self) -> bool:
        """Whether the number of hidden users is told apart."""
        return self.shows_hidden or get_config().public_hidden_count == "separate"

    def chosen(self, pks: Iterable[str]) -> Choices:
        """What the users ``pks`` chose, by the database (which wins over
        Redis): one query, none for no users or where no choice matters. The
        viewer's own choice is read in the same query, once."""
        wanted = list(pks)
        config = get_config()
        grades = config.last_seen_shown == "exact" and not self.shows_hidden
        if not wanted or not (config.allow_invisible or grades):
            return Choices()
        # A page's outputs ask about the same users (its one snapshot's):
        # the database is asked once, and this process's pages within
        # WHOS_ONLINE_SNAPSHOT_MAX_AGE of each other once; the viewer's own
        # choice is read anew once a page.
        asked = frozenset(wanted)
        found = self._chosen.get(asked)
        if found is None:
            own = None if self._own is not None else self._viewer_key()
            found = visibility.choices_among(
                wanted, reused_for=config.snapshot_max_age, fresh=own
            )
            if own is not None:
                self._learn_own(own, found)
            # Only what the users asked about chose: the viewer's own choice
            # (read with theirs) is nobody's count.
            found = Choices(found.invisible & asked, found.hide_last_seen & asked)
            self._chosen[asked] = found
        if not config.allow_invisible:
            return Choices(hide_last_seen=found.hide_last_seen)
        return found

    def own_choices(self) -> Choices:
        """What the viewer (logged in) chose, as the database says this
        page: read with the choices of the users the page shows, else now."""
        if self._own is None:
            own = str(self.viewer.pk)
            self._learn_own(own, visibility.choices_among([own]))
        assert self._own is not None
        return self._own

    def _learn_own(self, own: str, found: Choices) -> None:
        mine = frozenset([own])
        self._own = Choices(found.invisible & mine, found.hide_last_seen & mine)
        self.hides_own_last_seen = (
            not self.shows_hidden
            and get_config().last_seen_shown == "exact"
            and own in found.hide_last_seen
        )

    def _viewer_key(self) -> str | None:
        """The viewer's key, if they are logged in: their own choices are
        read with those of the users they look at."""
        viewer = self.viewer
        if not getattr(viewer, "is_authenticated", False):
            return None
        return str(viewer.pk)

    def last_seen(
        self, when: float | None, now: float, hides: bool
    ) -> tuple[float | None, Grade | None]:
        """When a user was last seen, as this viewer may learn it: the exact
        time, or how long ago roughly; ``hides``: whether they chose to
        hide it."""
        if when is None or get_config().last_seen_shown == "never":
            return None, None
        if self.shows_exact_last_seen(hides):
            return when, None
        return None, grade_of(now - when)

    def shows_exact_last_seen(self, hides: bool) -> bool:
        """Whether this viewer may learn to the minute when a user was last
        seen; ``hides``: whether that user chose to hide it."""
        shown = get_config().last_seen_shown
        if shown == "never":
            return False
        return self.shows_hidden or (
            shown == "exact" and not hides and not self.hides_own_last_seen
        )

    def seen_today(self, users: Sequence[Any], choices: Choices) -> list[Any]:
        """Of ``users`` seen today (recorded as visible: the users the
        figures count), those this viewer may be told of by name, sorted by
        name. The list says when each was last seen (today), so it names
        only users whose last seen the viewer may learn to the minute; a user
        hidden now (by their choice or the site's rule) only to staff; and
        none the site's rule keeps from the viewer. ``choices``: what they
        chose, as :meth:`chosen` read it."""
        told = [
            user
            for user in users
            if self.shows_exact_last_seen(str(user.pk) in choices.hide_last_seen)
            and (
                self.shows_hidden
                or not (str(user.pk) in choices.invisible or hidden_by_the_site(user))
            )
        ]
        refused = self.refused(told)
        return sorted(
            (user for user in told if str(user.pk) not in refused),
            key=lambda user: str(user).casefold(),
        )

    def counts(
        self,
        counts: Counts,
        newly_hidden: int = 0,
        refused: int = 0,
        refused_hidden: int = 0,
    ) -> Counts:
        """``counts`` as this viewer may learn them. ``newly_hidden``: users
        Redis still holds as visible who chose to appear offline;
        ``refused``: visible users the site's rule keeps from this viewer,
        ``refused_hidden``: hidden users it keeps from them (the newly
        hidden among them): neither is counted for them, staff included."""
        moved = min(newly_hidden, counts.users)
        counts = replace(
            counts,
            users=max(counts.users - moved - refused, 0),
            hidden=max(counts.hidden + moved - refused_hidden, 0),
        )
        if self.shows_hidden:
            return counts
        shown = get_config().public_hidden_count
        if shown == "separate":
            return counts
        if shown == "in-total":
            return replace(counts, users=counts.users + counts.hidden, hidden=0)
        return replace(counts, hidden=0)

    def figures(
        self, record: tuple[int, float] | None, today: Today, shown: Counts, now: float
    ) -> tuple[tuple[int, float] | None, Today]:
        """The record and today's figures beside ``shown``, the counts this
        viewer was given, so that visitors today >= most online today >=
        online now. Redis keeps them for visible people only; a viewer told
        of hidden users online is never told fewer were ever online."""
        people = shown.people
        if shown.is_estimate:
            return record, today
        if record is None or people > record[0]:
            record = (people, float(int(now) // 60 * 60))
        if people > today.most_online:
            today = replace(today, most_online=people)
        if today.visitors < today.most_online:
            # As many were online at once: at least that many came today.
            missing = today.most_online - today.visitors
            today = replace(today, guests=today.guests + missing)
        return record, today

    def presence(
        self,
        seen: float | None,
        ever: float | None,
        hidden: bool,
        hides: bool,
        now: float,
        visible_users: int,
        *,
        refused: bool = False,
        badge: bool = False,
    ) -> tuple[Status, float | None, Grade | None]:
        """A user's status and when they were last seen (exactly, or
        roughly), as this viewer may learn them: ``seen`` within the window,
        ``ever`` beyond it; with ``visible_users`` online that this viewer
        may see. ``refused``: the site's rule keeps the user from this
        viewer (then offline to them, staff too); ``badge``: for a badge,
        which shows a hidden user offline to staff too."""
        if not self.shows_names(visible_users):
            return "unknown", None, None
        if refused or hidden and (badge or not self.shows_hidden):
            return "offline", None, None
        exact, grade = self.last_seen(seen if seen is not None else ever, now, hides)
        return status_for(seen, now), exact, grade

    def sees_in_room(
        self,
        user: Any,
        visible: AbstractSet[str],
        hidden: AbstractSet[str],
        visible_users: Callable[[], int],
    ) -> bool:
        """Whether this viewer may learn that ``user``, found in a room's
        sets (``visible``, ``hidden``), is there: a hidden user is in no
        room but to staff, and a user the site's rule refuses in none;
        ``visible_users``: how many visible users are online, asked only
        where the least number of names matters."""
        pk = str(user.pk)
        if pk not in visible and pk not in hidden:
            return False
        least = visible_users() if get_config().min_names_listed > 0 else 0
        if not self.shows_names(least) or pk in self.refused([user]):
            return False
        return self.shows_hidden or not (
            pk in hidden or pk in self.chosen([pk]).invisible
        )


def grade_of(ago: float) -> Grade:
    """How long ago, roughly."""
    return next((grade for within, grade in GRADES if ago < within), "long-ago")


def grade_label(grade: Grade | None) -> str:
    """How long ago, roughly, in the active language ("" for none)."""
    return "" if grade is None else str(GRADE_LABELS[grade])


def status_for(last_seen: float | None, now: float) -> Status:
    """``online`` within ``AWAY_AFTER`` seconds, ``away`` within the window."""
    if last_seen is None:
        return "offline"
    ago = now - last_seen
    config = get_config()
    if ago < config.away_after:
        return "online"
    if ago < config.window:
        return "away"
    return "offline"

"""The public "Who is online" page, as phpBB's: everyone online, sorted by
name, last seen or where they are, filtered to users or crawlers, in pages
of any size, with the users seen today beside it; each page one Redis
round trip, everything through the viewer's gate (:mod:`whos_online.roster`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.utils.translation import pgettext_lazy

from whos_online.roster import BADGE_NAMES, Roster, online_roster
from whos_online.users import Named, OnlineUser

SORTS = {
    "seen": pgettext_lazy("sort the list by", "last seen"),
    "name": pgettext_lazy("sort the list by", "name"),
    "where": pgettext_lazy("sort the list by", "where"),
}
SHOWN = {
    "all": pgettext_lazy("show in the list", "everyone"),
    "users": pgettext_lazy("show in the list", "users"),
    "crawlers": pgettext_lazy("show in the list", "crawlers"),
}
PER_PAGE = 50
MOST_PER_PAGE = 200
# The most users the page can list, however it is sorted: the newest.
MOST_LISTED = BADGE_NAMES
TODAY_NAMED = 200


@dataclass(frozen=True)
class Board:
    """One page of the public list, and how it was asked for."""

    roster: Roster
    """The counts, the figures and what the viewer may learn."""
    users: list[OnlineUser]
    """This page's users, in the order asked for."""
    crawlers: list[Named]
    sort: str
    shown: str
    page: int
    per: int
    pages: int

    @property
    def sorts(self) -> list[tuple[str, Any]]:
        """Each way to sort the list, with its words."""
        return list(SORTS.items())

    @property
    def shown_choices(self) -> list[tuple[str, Any]]:
        """Each way to filter the list, with its words."""
        return list(SHOWN.items())

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None


def board_for(request: HttpRequest, asked: Mapping[str, str]) -> Board:
    """The page ``asked`` for (``sort``, ``show``, ``page``, ``per``; any
    other value reads as the default), for the request's viewer."""
    sort = _one_of(asked.get("sort"), SORTS)
    shown = _one_of(asked.get("show"), SHOWN)
    per = max(_whole(asked.get("per"), PER_PAGE, MOST_PER_PAGE), 1)
    # Past the last page is the last: no page can be further than this.
    page = max(_whole(asked.get("page"), 1, MOST_LISTED), 1)
    # Every sort reads all it can list: how many pages there are, and who is
    # "not listed" (past the 1,000 newest), are the same whatever the sort.
    roster = online_roster(MOST_LISTED, request=request, today_named=TODAY_NAMED)
    users = [] if shown == "crawlers" else sorted(roster.users, key=_SORT_KEYS[sort])
    pages = max((len(users) + per - 1) // per, 1)
    page = min(page, pages)
    return Board(
        roster=roster,
        users=users[(page - 1) * per : page * per],
        crawlers=[] if shown == "users" else roster.bots,
        sort=sort,
        shown=shown,
        page=page,
        per=per,
        pages=pages,
    )


def _by_name(online: OnlineUser) -> Any:
    return online.name.casefold()


def _by_seen(online: OnlineUser) -> Any:
    return -online.last_seen.timestamp()


def _by_where(online: OnlineUser) -> Any:
    # Users with no location come last, then by name within each place.
    label = online.location.label.casefold() if online.location else "\uffff"
    return label, online.name.casefold()


_SORT_KEYS = {"seen": _by_seen, "name": _by_name, "where": _by_where}


def _one_of(value: str | None, choices: Mapping[str, Any]) -> str:
    return value if value is not None and value in choices else next(iter(choices))


def _whole(value: str | None, default: int, most: int) -> int:
    """``value`` as a whole number written in ASCII digits, at most ``most``
    (a number of any length is read, never parsed whole); anything else is
    the ``default``."""
    if value is None or not (value.isascii() and value.isdigit()):
        return default
    digits = value.lstrip("0")
    return most if len(digits) > len(str(most)) else min(int(digits or "0"), most)

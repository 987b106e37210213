"""Invisible mode: a user's own choice to appear offline.

The choice is kept in the database (:class:`~whos_online.models.Visibility`)
and only there: Redis keeps no copy that could go stale. A record of a user
reads it (one query, once per guard period and device) and says whether
they are hidden; a toggle moves them in Redis at once, and when Redis cannot
be reached then, their next record does. Whatever Redis holds meanwhile,
every output asks the gate (:mod:`whos_online.gate`), which reads the
choices of the users it is about to show.

When the database cannot be read (the site forgot ``migrate whos_online``,
say), privacy fails closed: a user is taken to have chosen to appear
offline, and nothing raises (check ``whos_online.W004`` warns of the
unapplied migration).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from whos_online.store import get_store

# The models are imported where they are used: the middleware imports this
# module, and must be importable when the app is not installed, to say so.


@dataclass(frozen=True)
class Choices:
    """What some users chose, by key (strings)."""

    invisible: frozenset[str] = frozenset()
    hide_last_seen: frozenset[str] = frozenset()


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline (one query); ``True`` when
    the database cannot say."""
    return str(user.pk) in choices_among([user.pk]).invisible


def choices_among(
    pks: Iterable[object], *, reused_for: float = 0.0, fresh: str | None = None
) -> Choices:
    """What the users ``pks`` chose (one query; none for no users); every
    choice that hides, for all of them, when the database cannot say.

    With ``reused_for`` (seconds), what this process read of a user within
    that long is taken again, but ``fresh``'s choice (the viewer's own) is
    read anew: no query when every user's choice is that recent."""
    wanted = list(pks)
    chosen = get_store().state.chosen
    # Pages made for nobody logged in ask about one snapshot's users, the
    # same list page after page: what was made of it is taken whole, for
    # as long as the oldest choice in it may be reused.
    whole = tuple(wanted) if reused_for > 0 and fresh is None else None
    if whole is not None:
        kept = chosen.get(whole)
        if kept is not None and time.monotonic() - kept[0] < reused_for:
            return cast(Choices, kept[1])
    found, read_at = _choices(wanted, reused_for, fresh)
    if whole is not None and read_at is not None:
        chosen.put(whole, (read_at, found))
    return found


def _choices(
    pks: list[object], reused_for: float, fresh: str | None
) -> tuple[Choices, float | None]:
    """What the users ``pks`` chose, and when the oldest of it was read
    (``None`` when nothing was, or the database could not say)."""
    memo = get_store().state.choices
    known: dict[str, tuple[bool, bool]] = {}
    others: list[object] = []
    now = oldest = time.monotonic()
    for pk in pks:  # what the memo holds are primary keys already
        if reused_for > 0 and isinstance(pk, str) and pk != fresh:
            read = memo.get(pk)
            if read is not None and now - read[0] < reused_for:
                known[pk] = read[1:]
                if read[0] < oldest:
                    oldest = read[0]
                continue
        others.append(pk)
    missing = primary_keys([*others, *([] if fresh is None else [fresh])])
    missing = [pk for pk in dict.fromkeys(missing) if pk not in known]
    if not known and not missing:
        return Choices(), None
    wanted = [*known, *missing]
    if missing:
        read_now = _read(missing)
        if read_now is None:
            return Choices(frozenset(wanted), frozenset(wanted)), None
        now = time.monotonic()
        for pk in missing:
            known[pk] = _learn(pk, (now, *read_now.get(pk, (False, False))))
    found = Choices(
        frozenset(pk for pk, (invisible, _) in known.items() if invisible),
        frozenset(pk for pk, (_, hides) in known.items() if hides),
    )
    return found, oldest


def _learn(pk: str, read: tuple[float, bool, bool]) -> tuple[bool, bool]:
    """Keep what the database said ``pk`` chose; a choice that changed
    since this process last read it is shown on its next page, whoever's."""
    state = get_store().state
    before = state.choices.get(pk)
    if before is not None and before[1:] != read[1:]:
        state.chosen.clear()
    state.choices.put(pk, read)
    return read[1], read[2]


def _read(pks: list[str]) -> dict[str, tuple[bool, bool]] | None:
    """(invisible, hides last seen) of those of ``pks`` who chose either
    (one query); ``None`` when the database cannot say.

    Written as SQL: building and compiling the QuerySet cost about ten times
    what the database spends on it, on every page a user sees."""
    from whos_online.models import Visibility

    using = router.db_for_read(Visibility)
    connection = connections[using]
    key = Visibility._meta.pk
    assert key is not None
    target = key.target_field  # type: ignore[attr-defined]
    # As a lookup prepares them: a key is compared, never saved (MySQL
    # refuses 0 as an AutoField's value to save).
    params = [
        key.get_db_prep_value(
            key.get_prep_value(target.to_python(pk)), connection, True
        )
        for pk in pks
    ]
    # In a transaction, a savepoint, so a failure leaves it usable; where
    # each query commits, none (a savepoint or a transaction costs two
    # round trips more).
    inside = connection.in_atomic_block
    savepoint = transaction.atomic(using) if inside else contextlib.nullcontext()
    sql = _choices_sql(connection, len(pks))
    try:
        with savepoint, connection.cursor() as cursor:
            cursor.execute(sql, [*params, True, True])
            found = cursor.fetchall()
    except DatabaseError as exc:
        _unreadable(exc)
        return None
    return {
        str(target.to_python(pk)): (bool(invisible), bool(hides))
        for pk, invisible, hides in found
    }


def _choices_sql(connection: BaseDatabaseWrapper, keys: int) -> str:
    from whos_online.models import Visibility

    meta, quote = Visibility._meta, connection.ops.quote_name
    user, invisible, hides = (
        quote(str(meta.get_field(name).column))  # type: ignore[union-attr]
        for name in ("user", "invisible", "hide_last_seen")
    )
    marks = ", ".join(["%s"] * keys)
    return (
        f"SELECT {user}, {invisible}, {hides} FROM {quote(meta.db_table)} "
        f"WHERE {user} IN ({marks}) AND ({invisible} = %s OR {hides} = %s)"
    )


def primary_keys(members: Iterable[object]) -> list[str]:
    """The members that are primary keys of the user model, as strings."""
    field = get_user_model()._meta.pk
    assert field is not None
    found = []
    for member in members:
        try:
            field.to_python(member)
        except ValidationError:
            continue
        found.append(str(member))
    return found


def set_hide_last_seen(user: Any, hide: bool) -> bool:
    """Keep whether ``user`` hides when they were last seen; ``False`` if
    the database could not keep it."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            Visibility.objects.update_or_create(
                user=user, defaults={"hide_last_seen": hide}
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    forget_choices(user)
    return True


def set_invisible(user: Any, invisible: bool) -> bool:
    """Keep the choice, and apply it in Redis at once; ``False`` if the
    database could not keep it, and nothing changed. When Redis cannot be
    reached, the choice applies at the user's next record, and every output
    follows it meanwhile. This process's shared snapshots are dropped, so
    its next page shows the choice."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            Visibility.objects.update_or_create(
                user=user, defaults={"invisible": invisible}
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    get_store().set_invisible(str(user.pk), invisible)  # else at their next record
    forget_choices(user)
    return True


def forget_choices(user: Any) -> None:
    """Drop what this process read of ``user``'s choices, and its shared
    snapshots: its next page shows what they chose now."""
    state = get_store().state
    state.choices.pop(str(user.pk), None)
    state.chosen.clear()
    state.snapshots.clear()


def _unreadable(exc: DatabaseError) -> None:
    get_store().state.refused.warning(
        "visibility",
        "Who's online cannot read users' choices to appear offline (%s: %s), "
        "so it lists nobody as visible on their say-so. Has `manage.py "
        "migrate whos_online` been run?",
        type(exc).__name__,
        exc,
    )

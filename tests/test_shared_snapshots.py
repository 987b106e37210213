"""The snapshot a process shares between its pages
(``WHOS_ONLINE_SNAPSHOT_MAX_AGE``) is never one read before a change it
has been told of: a live stream that opens after the change, and the pages
after it, would show that one until the next change."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online.roster import online_roster
from whos_online.state import Snapshots
from whos_online.store import get_store

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def shared_snapshots(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30


def reading_before(change: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's next snapshot is read, then ``change`` happens and is
    forgotten as an announcement forgets it, before the snapshot is kept:
    the listening thread heard of it while the page's read was on its way."""
    store = get_store()
    read = store.snapshot

    def racing(*args: Any, **kwargs: Any) -> Any:
        taken = read(*args, **kwargs)
        change()
        monkeypatch.setattr(store, "snapshot", read)
        return taken

    monkeypatch.setattr(store, "snapshot", racing)


def test_a_snapshot_read_before_an_announced_change_is_not_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def arrival() -> None:
        presence.record_guest("g1")
        get_store().forget_snapshots(None)

    reading_before(arrival, monkeypatch)
    assert online_roster().counts.people == 0  # the page that read before it
    assert online_roster().counts.people == 1  # the next one reads afresh


def test_a_snapshot_read_before_the_process_dropped_them_all_is_not_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def login() -> None:
        presence.record_guest("g1")
        get_store().state.snapshots.clear()  # as a login or a logout does

    reading_before(login, monkeypatch)
    assert online_roster().counts.people == 0
    assert online_roster().counts.people == 1


def test_a_snapshot_read_before_another_rooms_change_is_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def elsewhere() -> None:
        presence.record_in_room("thread:2", "guests", "g2")
        get_store().forget_snapshots("thread:2")

    reading_before(elsewhere, monkeypatch)
    first = online_roster()
    presence.record_guest("g1")  # unannounced here: the shared one stays
    assert online_roster().counts.people == first.counts.people


def test_what_a_process_keeps_of_its_snapshots_is_bounded() -> None:
    kept = Snapshots(1)
    for room in ("a", "b"):
        kept.keep((room, False), time.monotonic(), 1, room)
    assert list(kept.values()) == [(kept[("b", False)][0], 1, "b")]
    for room in ("a", "b"):
        kept.forget((room, False))
    assert list(kept.forgotten) == [("b", False)]

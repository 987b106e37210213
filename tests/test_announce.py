"""Redis announces a join or a leave on the shard's changes channel, and
nothing for a renewal; the message names the room (or ``*``, the site's
lists), never who; the rooms one script entered and left are one message."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import presence
from tests.conftest import Clock
from whos_online.store import Subscription, get_store


@pytest.fixture
def heard() -> Iterator[Subscription]:
    subscription = get_store().listen()
    subscription.next(1)  # the confirmation
    yield subscription
    subscription.close()


def announced(subscription: Subscription) -> list[str]:
    """The rooms (or ``*``) announced since last asked: a message may name
    several."""
    said = []
    while (names := subscription.next(0.05)) is not None:
        said.extend(names)
    return said


def test_a_guest_coming_online_is_announced_as_the_sites_lists(
    heard: Subscription,
) -> None:
    presence.record_guest("g1")
    assert announced(heard) == ["*"]


def test_a_guest_seen_again_is_not_announced(heard: Subscription) -> None:
    presence.record_guest("g1")
    announced(heard)
    presence.record_guest("g1")
    assert announced(heard) == []


def test_a_user_who_chooses_to_appear_offline_is_announced(heard: Subscription) -> None:
    presence.record_user(7)
    presence.record_in_room("thread:1", "users", "7")
    announced(heard)
    presence.set_invisible("7", True)
    assert announced(heard) == ["*", "thread:1"]


def test_a_device_entering_a_room_is_announced_with_the_room(
    heard: Subscription,
) -> None:
    presence.record_guest("g1")
    announced(heard)
    presence.enter_rooms("guests", "g1", "d1", ["thread:1"])
    assert announced(heard) == ["thread:1"]


def test_a_device_staying_in_its_room_is_not_announced(heard: Subscription) -> None:
    presence.record_in_room("thread:1", "guests", "g1")
    announced(heard)
    presence.record_in_room("thread:1", "guests", "g1")
    assert announced(heard) == []


def test_a_device_moving_on_announces_both_rooms(heard: Subscription) -> None:
    presence.record_guest("g1")
    get_store().enter_rooms("guests", "g1", "d1", ["thread:1"])
    announced(heard)
    get_store().enter_rooms("guests", "g1", "d1", ["thread:2"])
    assert sorted(announced(heard)) == ["thread:1", "thread:2"]


def test_a_tabs_ping_renewing_its_place_is_not_announced(heard: Subscription) -> None:
    presence.record_guest("g1")
    store = get_store()
    store.keep_tab("guests", "g1", "d1", "t1", ["thread:1"], 30)
    announced(heard)
    store.keep_tab("guests", "g1", "d1", "t1", ["thread:1"], 30)
    assert announced(heard) == []


def test_a_tab_closing_is_announced_with_its_room(heard: Subscription) -> None:
    presence.record_guest("g1")
    store = get_store()
    store.keep_tab("guests", "g1", "d1", "t1", ["thread:1"], 30)
    announced(heard)
    store.leave_tab("guests", "g1", "t1")
    assert announced(heard) == ["thread:1"]


def test_logging_out_is_announced_with_the_rooms_left(heard: Subscription) -> None:
    presence.record("users", "7", device="d1")
    get_store().enter_rooms("users", "7", "d1", ["thread:1"])
    announced(heard)
    presence.log_out("7", "d1")
    assert sorted(announced(heard)) == ["*", "thread:1"]


def test_pruning_announces_the_lists_and_rooms_it_emptied(
    heard: Subscription, clock: Clock
) -> None:
    presence.record_guest("g1")
    clock.advance(700)
    presence.record_guest("g2")  # keeps the guests set from expiring whole
    presence.record_in_room("topic:1", "guests", "g3")
    clock.advance(200)
    presence.record_in_room("topic:1", "guests", "g4")
    clock.advance(110)  # g1 left the window, g3 the room
    announced(heard)
    presence.prune()
    assert sorted(announced(heard)) == ["*", "topic:1"]


def test_pruning_nothing_announces_nothing(heard: Subscription) -> None:
    presence.prune()
    assert announced(heard) == []

"""The Lua scripts are sent with the parts of the shared prelude they use:
Redis runs a script's prelude on every call."""

from __future__ import annotations

from whos_online.store import scripts


def defined(script: str) -> set[str]:
    source = scripts.source_of(script)[0]
    return {
        line.removeprefix("local function ").split("(")[0]
        for line in source.splitlines()
        if line.startswith("local function ")
    }


def test_a_script_that_uses_none_of_the_prelude_carries_none() -> None:
    assert defined("history") == set()


def test_the_record_script_carries_what_it_announces_with_and_nothing_of_rooms() -> (
    None
):
    assert "announce" in defined("record")
    assert "places_of" not in defined("record")


def test_a_part_brings_the_parts_it_uses() -> None:
    assert {"leave_everywhere", "places_of", "announce"} <= defined("forget_guest")

"""Everything that changes presence: records, rooms, logging out, invisible
mode. Each is one round trip but where a docstring says otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.exceptions import RedisError

from whos_online.store import scripts
from whos_online.store.keys import Kind, Shard
from whos_online.store.places import Places
from whos_online.store.results import LoggedOut, Raised, Sighting, Stamp
from whos_online.store.scripts import Arg, Call

# Lua's unpack() is limited by its C stack; send this many members at a time.
BATCH = 1000
# A renewal in plain commands is for members this far inside the window at
# least, so that no clock difference can make one who left look renewed.
RENEWAL_MARGIN = 60


class Writes(Places):
    def record(self, sighting: Sighting) -> Stamp | None:
        """Mark the member of ``sighting`` as seen now; ``None`` if Redis
        failed. A login also takes the guest they were off the guests, in
        the same round trip. The first record of a minute in a shard also
        keeps the shard's figures (two round trips more, once a minute)."""
        return self.or_default(
            lambda: self._record(sighting), None, self.breaker_of(sighting.member)
        )

    def _record(self, sighting: Sighting) -> Stamp:
        shard = self.shard_of(sighting.member)
        renewed = self._renewed(shard, sighting)
        if renewed is not None:
            return renewed
        call = self.record_call(shard, sighting)
        if sighting.left_guest:
            # The guest leaves first, so the login never counts them twice.
            forget = self._forget_guest(sighting.left_guest, sighting.takes_back)
            reply = scripts.run_all(self.client, [*forget, call])[-1]
        else:
            reply = scripts.run(self.client, call.script, call.keys, call.args)
        now, generation, *flags, online, peak_before, record_before = (
            reply.decode().split()
        )
        entered, moved, tick = (flag == "1" for flag in flags)
        label = self.state.clock.observe(float(now), generation, shard.index)
        if tick:
            self._tick(shard, int(float(now) // 60))
        if moved:  # their choice changed since their last record: their rooms too
            self.move_in_rooms(shard, sighting.member, sighting.kind == "hidden")
        raised = None
        if online != "-":
            raised = Raised(int(online), peak_before, record_before)
        return Stamp(float(now), label, entered, raised)

    def record_call(self, shard: Shard, sighting: Sighting) -> Call:
        """The script :meth:`record` runs."""
        config, kind, member = self.config, sighting.kind, sighting.member
        is_user = kind in ("users", "hidden")
        minute = self.minute()
        keys = [
            shard.members("users" if is_user else kind),
            shard.meta(),
            shard.tick(minute),
        ]
        if kind != "bots":
            counted: Kind = "users" if is_user else "guests"
            keys += [
                shard.minute_key(counted, minute),
                shard.day_key(self.today(), counted),
            ]
        if kind == "guests":
            keys.append(shard.day_key(self.today(), "logins"))
        if is_user:
            keys += [
                shard.members("hidden"),
                shard.devices(member),
                shard.last_seen(),
            ]
        day: Arg = ""
        if len(self.shards) == 1 and kind != "bots":  # the site's keys share its tag
            other: Kind = "guests" if is_user else "users"
            site = self.layout
            keys += [shard.members(other), site.record(), site.daily_peaks()]
            day = self.today()
        args: list[Arg] = [
            kind,
            member,
            config.window,
            config.max_members,
            sighting.device,
            config.last_seen_kept,
            "1" if sighting.logged_out else "0",
            day,
            shard.changes(),
        ]
        return Call("record", keys, args, shard)

    def _renewed(self, shard: Shard, sighting: Sighting) -> Stamp | None:
        """Renew a member the caller saw recorded lately, in this shard's
        current data and today, with plain commands (one round trip, a
        fraction of the script's cost); ``None`` when that cannot be vouched
        for, or Redis' answer shows the member is not where a renewal would
        leave them: the script records them then. The score is Redis' time as
        this process learnt it in the past few seconds."""
        config, last = self.config, sighting.last_recorded
        if (
            last is None
            or sighting.kind == "bots"  # no guard names a bot's record
            or sighting.left_guest
        ):
            return None
        now = self.learnt_now(shard)
        if now is None:
            return None
        if now - last > config.window - RENEWAL_MARGIN or last < now - now % 86400:
            return None
        minute = int(now // 60)
        asks = self.state.minutes_asked[shard.index] != minute
        replies = self._renewal(shard, sighting, now, asks).execute()
        if not self._renewal_holds(sighting, replies[: self._checked(sighting)]):
            return None
        if asks:
            self.state.minutes_asked[shard.index] = minute
            if replies[-1]:
                self._tick(shard, minute)
        return Stamp(now, self.state.clock.label(shard.index), entered=False)

    def _renewal(
        self, shard: Shard, sighting: Sighting, now: float, asks_tick: bool
    ) -> Any:
        """The commands of a renewal, which must do what record.lua does for a
        member already online; their replies say whether it held. A set
        renewed here keeps the expiry the minute's tick gives it, and data
        Redis lost shows as a member missing from its set. ``asks_tick``:
        whether this is the first renewal of the minute this process sends
        to the shard, which may have to keep the minute's figures."""
        config, kind, member = self.config, sighting.kind, sighting.member
        window, minute = config.window, int(now // 60)
        pipe: Any = self.client.pipeline(transaction=False)
        is_user = kind != "guests"
        # A user whose choice changed since their last record is not in the
        # set of their kind: the ZADD XX fails, and the script moves them.
        pipe.zadd(shard.members(kind), {member: now}, xx=True, gt=True, ch=True)
        if is_user and sighting.device:
            # The devices set keeps the expiry the script gave it: once it
            # lapses, the device is missing and the script records the user
            # again.
            devices = shard.devices(member)
            pipe.zadd(devices, {sighting.device: now}, xx=True, gt=True, ch=True)
            pipe.zremrangebyscore(devices, "-inf", f"({now - window}")
        if kind != "hidden":  # the estimates count the visible sets only
            pipe.pfadd(shard.minute_key(kind, minute), member)
        if is_user and config.last_seen_kept:
            # Only a user the script put there: it keeps the set's cap.
            pipe.zadd(shard.last_seen(), {member: now}, xx=True, gt=True)
        if asks_tick:
            pipe.set(shard.tick(minute), "1", nx=True, ex=120)
        return pipe

    @staticmethod
    def _checked(sighting: Sighting) -> int:
        """How many of the renewal's first replies say whether it held."""
        return 2 if sighting.kind != "guests" and sighting.device else 1

    @staticmethod
    def _renewal_holds(sighting: Sighting, replies: list[Any]) -> bool:
        """Whether the member was renewed where a record would leave them: in
        the set of their kind, and a user's device among their devices (the
        replies of the commands :meth:`_checked` counts)."""
        return all(replies)

    def _forget_guest(self, guest: str, takes_back: Raised | None) -> list[Call]:
        shard = self.shard_of(guest)
        day = self.today()
        keys = [
            shard.members("guests"),
            shard.day_key(day, "logins"),
            shard.start(),
        ]
        args: list[Arg] = [guest, self.config.max_members]
        if takes_back is not None and len(self.shards) == 1:
            # Raised in record.lua, which only a site of one shard does: its
            # keys share the site's tag.
            site = self.layout
            keys += [site.record(), site.daily_peaks()]
            raised = takes_back
            args += [day, raised.online, raised.peak_before, raised.record_before]
        return [Call("forget_guest", keys, args, shard)]

    def _tick(self, shard: Shard, minute: int) -> None:
        """Keep the shard's figures for ``minute``, and raise the site's."""
        config = self.config
        span = max(config.window // 60, 1)
        closed = range(minute - span, minute)
        keys = [
            *(shard.members(kind) for kind in ("users", "hidden", "guests")),
            shard.history(),
            shard.estimate("users"),
            shard.estimate("guests"),
            *(shard.minute_key("users", m) for m in closed),
            *(shard.minute_key("guests", m) for m in closed),
        ]
        args = [config.window, config.max_members, minute, span]
        online, estimated = scripts.run(self.client, "tick", keys, args)
        site = self.layout
        keys = [site.record(), site.daily_peaks(), site.figures()]
        args = [shard.index, minute, online, estimated, minute // 1440]
        self._on_site_keys("raise", keys, args)

    def _on_site_keys(
        self, script: str, keys: Sequence[str], args: Sequence[Arg]
    ) -> None:
        """Run ``script`` on the site's own keys, under their breaker: a
        failure there is theirs, not any shard's."""
        breaker = self.state.record_breaker
        if breaker.is_open:
            return
        try:
            scripts.run(self.client, script, keys, args)
        except RedisError as exc:
            breaker.failed(exc)
        else:
            breaker.succeeded()

    @property
    def has_peak_to_keep(self) -> bool:
        """Whether :meth:`keep_peak_seen` has anything to write."""
        return self.state.peak_seen is not None

    def keep_peak_seen(self) -> None:
        """Keep the most people a snapshot of this process saw online at
        once, when it was more than the site's record or today's peak held
        (one round trip, then): a peak shown between two minutes' figures
        is the record afterwards, though reads never write. With one shard
        each newcomer raises them at once, so this is rarely needed."""
        seen = self.state.peak_seen
        if seen is None:
            return
        self.state.peak_seen = None
        site = self.layout
        self._on_site_keys("peak", [site.record(), site.daily_peaks()], list(seen))

    def set_location(self, pk: str, location: str) -> bool:
        """Keep where the user ``pk`` is ("label<TAB>path") for the window;
        ``False`` if Redis failed."""
        key = self.shard_of(pk).where(pk)
        window = self.config.window
        return self.or_default(
            lambda: bool(self.client.set(key, location, ex=window)),
            False,
            self.breaker_of(pk),
        )

    def log_out(self, pk: str, device: str) -> LoggedOut | None:
        """The user ``pk`` logged out on ``device``: take them off the lists,
        and out of every room they are in (their places freed), unless
        another device of theirs was seen within the guard period. One
        round trip; ``None`` if Redis failed."""
        return self.or_default(
            lambda: self._log_out(pk, device), None, self.breaker_of(pk)
        )

    def _log_out(self, pk: str, device: str) -> LoggedOut:
        shard = self.shard_of(pk)
        keys = [
            shard.members("users"),
            shard.members("hidden"),
            shard.devices(pk),
            shard.start(),
            shard.where(pk),
        ]
        args: list[Arg] = [pk, device, self.config.guard_seconds]
        was_hidden = scripts.run(self.client, "log_out", keys, args)
        if was_hidden is None:
            return LoggedOut(removed=False, hidden=False)
        return LoggedOut(removed=True, hidden=bool(was_hidden))

    def set_invisible(self, pk: str, invisible: bool) -> bool:
        """Move the user ``pk`` at once to the hidden sets (``invisible``) or
        back, in the site's sets and their rooms' (one round trip, three if
        in rooms too); ``False`` if Redis failed. The database keeps their
        choice: Redis keeps no copy."""
        return self.or_default(
            lambda: self._set_invisible(pk, invisible), False, self.breaker_of(pk)
        )

    def _set_invisible(self, pk: str, invisible: bool) -> bool:
        shard = self.shard_of(pk)
        keys = [
            shard.members("users"),
            shard.members("hidden"),
            shard.start(),
        ]
        config = self.config
        args: list[Arg] = [
            pk,
            "1" if invisible else "0",
            config.window,
            config.longest_place + 1,
        ]
        scripts.run(self.client, "visibility", keys, args)
        return True

    def sync_clock(self, shard: int | None = None) -> None:
        """Learn Redis' time and the data generation of ``shard`` (of every
        shard if ``None``) now; a shard that fails is left as it was."""
        chosen = self.shards if shard is None else (self.shards[shard],)
        breaker = None if shard is None else self.state.shard_breakers[shard]
        self.or_default(lambda: self._sync_clock(chosen), None, breaker)

    def catch_up(self, generation: str) -> None:
        """A guard names data ``generation`` this process has not heard of
        lately: learn the shard's time and generation now, so the guard may
        hold after all."""
        stale = self.state.clock.stale_shard(generation)
        if stale is not None:
            self.sync_clock(stale)

    def _sync_clock(self, chosen: tuple[Shard, ...]) -> None:
        calls = [Call("clock", [one.meta()], [], one) for one in chosen]
        answered, _ = scripts.run_shards(self.client, calls, self.state.shard_breakers)
        for call, (now, generation) in answered:
            self.state.clock.observe(float(now), generation.decode(), call.shard.index)

    def reset_most_ever_online(self) -> bool:
        """Forget the record; whether there was one."""
        return bool(self.client.delete(self.layout.record()))

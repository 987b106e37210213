"""Running the Lua scripts of ``store/lua/``, one at a time or several in one
round trip.

Scripts are sent by SHA (``EVALSHA``), and by source when the server does
not know them yet (``EVAL``, which goes, like ``EVALSHA``, to the one server
holding the keys and leaves the script known there; ``SCRIPT LOAD`` would go
to every master of a cluster, and fail while any one is down).

A call the server did not know is sent again after the others of its round
trip ran, so calls that must run in order (:func:`run_all`) are sent by
source but for the last: a Redis just started knows no script, and a login
whose guest left after its user was counted would count one person twice.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from redis import Redis
from redis.exceptions import NoScriptError, RedisError, ResponseError

from whos_online.state import CircuitBreaker
from whos_online.store.keys import Shard

Arg = str | bytes | int | float


# Shared by the scripts: the names of keys a script is told of by name, and
# the places members hold in rooms. Each part starts with a line "--- NAMES"
# naming what it defines, and goes before a script only when the script (or
# a part it takes) uses one of them: Redis runs a script's prelude on every
# call, and defining what it never calls is most of an empty script's cost.
PRELUDE = "prelude"
PART = re.compile(r"^--- (.+)$", re.MULTILINE)
COMMENT = re.compile(r"--.*")
HERE = "--- prelude"


def _read(name: str) -> str:
    return files(__package__).joinpath("lua", f"{name}.lua").read_text("utf-8")


def _prelude_parts(prelude: str) -> list[tuple[frozenset[str], str]]:
    """The parts of the prelude's text, in order: the names each defines,
    its text."""
    pieces = PART.split(prelude)[1:]
    return [
        (frozenset(names.split()), text.strip("\n"))
        for names, text in zip(pieces[::2], pieces[1::2], strict=True)
    ]


def _uses(text: str, names: frozenset[str]) -> bool:
    code = COMMENT.sub("", text)
    return any(re.search(rf"\b{name}\b", code) for name in names)


def _prelude_for(body: str, parts: list[tuple[frozenset[str], str]]) -> str:
    """The ``parts`` of the prelude ``body`` uses, and those they use."""
    taken = [False] * len(parts)
    wanted = [body]
    while wanted:
        text = wanted.pop()
        for i, (names, part) in enumerate(parts):
            if not taken[i] and _uses(text, names):
                taken[i] = True
                wanted.append(part)
    return "\n\n".join(part for i, (_, part) in enumerate(parts) if taken[i])


def assemble(body: str, prelude: str) -> str:
    """A script's text as Redis is sent it: the parts of ``prelude`` it
    uses go first, or where the script has a line ``--- prelude``: a hot
    path above it, which needs none of them, returns before Redis defines
    them."""
    above, marked, below = body.rpartition(f"{HERE}\n")
    if not marked:
        above, below = "", body
    return f"{above}{_prelude_for(body, _prelude_parts(prelude))}\n{below}"


@functools.cache
def source_of(name: str) -> tuple[str, str]:
    """The source of ``lua/<name>.lua`` as :func:`assemble` makes it, and
    its SHA1, read once."""
    source = assemble(_read(name), _read(PRELUDE))
    return source, hashlib.sha1(source.encode()).hexdigest()


def script_names() -> list[str]:
    return sorted(
        path.name.removesuffix(".lua")
        for path in files(__package__).joinpath("lua").iterdir()
        if path.name.endswith(".lua") and path.name != f"{PRELUDE}.lua"
    )


def run(client: Redis, name: str, keys: Sequence[str], args: Sequence[Arg]) -> Any:
    """The reply of the script ``name``: one round trip."""
    source, sha = source_of(name)
    try:
        return client.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        return client.eval(source, len(keys), *keys, *args)


@dataclass(frozen=True)
class Call:
    """A script to run in ``shard``, among several sent together."""

    script: str
    keys: Sequence[str]
    args: Sequence[Arg]
    shard: Shard


def run_all(client: Redis, calls: Sequence[Call]) -> list[Any]:
    """Each call's reply, in one round trip (per master, on a cluster), the
    calls run in the order given (on each server); raises the first error.
    Every call but the last is sent by source, so that none of them can be
    left for after the ones that follow it."""
    replies = pipelined(client, calls, by_source=len(calls) - 1)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def run_shards(
    client: Redis,
    calls: Sequence[Call],
    breakers: Sequence[CircuitBreaker],
    commands: Sequence[Sequence[Arg]] = (),
) -> tuple[list[tuple[Call, Any]], list[Any]]:
    """Like :func:`run_all`, for reads that can do without a shard that is
    down: a shard whose breaker is open is not asked, one that fails opens
    its breaker and is left out. Raises only when no shard answers. Plain
    ``commands`` (of the site's own keys) go in the same round trip; their
    replies come second, an error in place of a reply that failed."""
    if len(breakers) == 1:
        if commands or len(calls) > 1:
            replies = pipelined(client, calls, *commands)
        else:
            replies = [run(client, calls[0].script, calls[0].keys, calls[0].args)]
        for reply in replies[: len(calls)]:
            if isinstance(reply, Exception):
                raise reply
        return list(zip(calls, replies, strict=False)), replies[len(calls) :]
    live = [call for call in calls if not breakers[call.shard.index].is_open]
    try:
        replies = pipelined(client, live, *commands)
    except RedisError:  # a cluster pipeline gives up whole when a node is down
        replies = [_reply_or_error(client, call) for call in live]
        replies += [_command_or_error(client, command) for command in commands]
    answered = []
    failure: RedisError = RedisError("Every shard's breaker is open.")
    for call, reply in zip(live, replies, strict=False):
        if isinstance(reply, RedisError):
            failure = reply
            breakers[call.shard.index].failed(reply)
        else:
            breakers[call.shard.index].succeeded()
            answered.append((call, reply))
    if not answered:
        raise failure
    return answered, replies[len(live) :]


def _command_or_error(client: Redis, command: Sequence[Arg]) -> Any:
    try:
        return client.execute_command(*command)  # type: ignore[no-untyped-call]
    except RedisError as exc:
        return exc


def _reply_or_error(client: Redis, call: Call) -> Any:
    try:
        return run(client, call.script, call.keys, call.args)
    except RedisError as exc:
        return exc


def pipelined(
    client: Redis,
    calls: Sequence[Call],
    *commands: Sequence[Arg],
    by_source: int = 0,
) -> list[Any]:
    """Send every call, then any plain ``commands``, before reading any
    reply; errors are returned in place. The first ``by_source`` calls are
    sent with their script's source, the others by SHA: those of a script
    the server does not know are sent again with its source, after the rest
    ran."""
    replies = _send(client, calls, commands, by_source=by_source)
    unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
    if unknown:
        again = _send(client, [calls[i] for i in unknown], (), by_source=len(unknown))
        for i, reply in zip(unknown, again, strict=True):
            replies[i] = reply
    return replies


def plain(client: Any, commands: Sequence[Sequence[Arg]]) -> list[Any]:
    """The raw replies of plain ``commands``, sent in one round trip; each
    error reply in place, as its exception. Written on one connection of
    the client's pool: redis-py's pipeline keeps a stack, callbacks and
    retries a move between rooms has no use for, and cost the web process
    about as much again as the commands' own sending and reading. A client
    of a cluster goes by its pipeline, which parses some replies as
    redis-py's methods do (a ``SET``'s ``GET`` kept)."""
    if not isinstance(client, Redis):
        pipe: Any = client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(
                *command, **({"get": True} if command[0] == "SET" else {})
            )
        return list(pipe.execute(raise_on_error=False))
    pool = client.connection_pool
    connection: Any = pool.get_connection()
    # A connection that fails to send or read disconnects itself (redis-py):
    # no reply is left unread on one given back to the pool.
    try:
        connection.send_packed_command(connection.pack_commands(commands))
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(connection.read_response())
            except ResponseError as error:
                replies.append(error)
        return replies
    finally:
        pool.release(connection)


def _send(
    client: Redis,
    calls: Sequence[Call],
    commands: Sequence[Sequence[Arg]],
    *,
    by_source: int,
) -> list[Any]:
    """The replies of ``calls``, the first ``by_source`` of them sent with
    their script's source, then of ``commands``."""
    # Commands go by name: redis-py's cluster pipeline refuses its evalsha()
    # and pfcount() methods, but routes the commands themselves by their keys.
    pipe: Any = client.pipeline(transaction=False)
    for i, call in enumerate(calls):
        whole = i < by_source
        command = "EVAL" if whole else "EVALSHA"
        script = source_of(call.script)[0 if whole else 1]
        pipe.execute_command(command, script, len(call.keys), *call.keys, *call.args)
    for plain in commands:
        pipe.execute_command(*plain)
    return list(pipe.execute(raise_on_error=False))

"""The live run's report sets the streams' CPU against that of as many tabs
polling every 30 s, and the run waits for a join until each stream still
open had its event (benchmarks/streams.py, benchmarks/streams_report.py)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.streams_report")

from benchmarks.streams_clients import Clients  # noqa: E402
from benchmarks.streams_report import ROWS, write  # noqa: E402


def a_round(**figures: float | None) -> dict[str, Any]:
    return {key: 1.0 for key, *_ in ROWS} | figures


def results(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "command": "benchmarks/streams.py --streams 3000",
        "mode": "full",
        "minutes": 1.0,
        "params": {"rounds": len(rounds), "joins": 10, "poll": 10, "quiet": 5},
        "environment": {"date": "today", "commit": "abc", "machine": "m"}
        | {"software": "s"},
        "rounds": {"3000": rounds},
    }


def test_the_break_even_is_the_join_rate_at_which_streams_cost_as_polling(
    tmp_path: Path,
) -> None:
    # 3,000 tabs polling: 100 requests/s at 5 ms = 500 ms/s; streams idle at
    # 20 ms/s and 120 ms a join: (500 - 20) / 120 = 4 joins/s, 240 a minute.
    rounds = [
        a_round(poll_cpu_ms_per_request=5, quiet_cpu_ms_per_s=20, cpu_ms_per_join=c)
        for c in (100, 120, 200)
    ]
    write(results(rounds), tmp_path)
    report = (tmp_path / "streams.md").read_text()
    assert "| 3,000 | 100.0/s saved | 500 ms/s (50.0% of a core) |" in report
    assert "| 20.00 ms/s | 120.0 ms | 240 |" in report
    assert "100.0 / **120.0** / 200.0 ms" in report  # min / median / max
    assert "`benchmarks/streams.py --streams 3000`" in report


def test_a_figure_no_round_has_is_a_dash(tmp_path: Path) -> None:
    write(results([a_round(delay_p99_ms=None)]), tmp_path)
    assert (
        "| Record → event at a client, p99 | — |"
        in (tmp_path / "streams.md").read_text()
    )


def test_a_join_is_heard_when_every_stream_still_open_had_its_event() -> None:
    had, ended, keeps = (socket.socketpair() for _ in range(3))
    clients = Clients(3, opened=3)
    for _, client_end in (had, ended, keeps):
        client_end.setblocking(False)
        clients.heard[client_end.fileno()] = 0
    keeps[0].sendall(b": keep-alive\n\n")  # not an event: still waiting
    had[0].sendall(b"id: 1\ndata: x\n\n")
    ended[0].close()  # the server closed this stream
    delays = clients.hear(1, time.perf_counter(), deadline=0.5)
    assert len(delays) == 1
    assert clients.ended == 1
    keeps[0].sendall(b"id: 2\ndata: x\n\n")
    assert len(clients.hear(1, time.perf_counter(), deadline=5)) == 1
    for pair in (had, ended, keeps):
        for end in pair:
            end.close()

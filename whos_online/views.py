"""Endpoints: the widget as JSON and as an HTML fragment, and the heartbeat.

Include them with ``path("whos-online/", include("whos_online.urls"))``.
The read endpoints answer conditional requests (an unchanged list costs a
304), vary on the cookie, and never show guest addresses; hidden users are
listed to staff only, and visitors who are not logged in are turned away
unless ``WHOS_ONLINE_ANONYMOUS_CAN_VIEW``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string
from django.utils.cache import (
    get_conditional_response,
    patch_cache_control,
    patch_vary_headers,
)
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_POST

from whos_online import presence
from whos_online.conf import conf
from whos_online.failsafe import breaker
from whos_online.rooms import room_from_token
from whos_online.roster import Roster, online_roster
from whos_online.visitors import is_hidden


class Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        self.status, self.reason = status, reason


@require_GET
def online_json(request: HttpRequest) -> HttpResponseBase:
    try:
        roster = _roster_for(request)
    except Refused as refused:
        return JsonResponse({"error": refused.reason}, status=refused.status)
    return _conditional(request, JsonResponse(roster_data(roster)))


@require_GET
def online_fragment(request: HttpRequest) -> HttpResponseBase:
    try:
        roster = _roster_for(request)
    except Refused as refused:
        return HttpResponse(refused.reason, status=refused.status)
    html = render_to_string("whos_online/widget.html", {"roster": roster}, request)
    return _conditional(request, HttpResponse(html))


@require_POST
@csrf_protect
def heartbeat(request: HttpRequest) -> HttpResponseBase:
    """Record a logged-in user now, at most once per half heartbeat interval."""
    user = request.user
    if not user.is_authenticated:
        return JsonResponse({"error": "Log in first."}, status=403)
    least = conf.HEARTBEAT_SECONDS / 2
    failed = object()
    recorded = breaker.call(
        lambda: presence.record_heartbeat(
            user.pk, hidden=is_hidden(user), least_interval=least
        ),
        failed,
    )
    if recorded is failed:
        return JsonResponse({"recorded": False}, status=503)
    if recorded is None:
        response = JsonResponse({"recorded": False}, status=429)
        response["Retry-After"] = str(int(least))
        return response
    return HttpResponse(status=204)


def _roster_for(request: HttpRequest) -> Roster:
    if not (conf.ANONYMOUS_CAN_VIEW or request.user.is_authenticated):
        raise Refused(403, "Log in to see who is online.")
    room = None
    token = request.GET.get("room")
    if token is not None:
        room = room_from_token(token, request.user)
        if room is None:
            raise Refused(400, "Unknown room.")
    return online_roster(room=room, viewer=request.user)


def roster_data(roster: Roster) -> dict[str, Any]:
    """The roster as JSON: names and counts, never an address."""
    return {
        "available": roster.available,
        "window": roster.window,
        "counts": {
            "users": roster.counts.users,
            "hidden": roster.counts.hidden,
            "guests": roster.counts.guests,
            "bots": roster.counts.bots,
            "total": roster.counts.total,
        },
        "users": [
            {"name": online.name, "url": online.url, "hidden": online.hidden}
            for online in roster.users
        ],
        "more": roster.more,
        "bots": [bot.name for bot in roster.bots],
        "record": (
            None
            if roster.record is None
            else {"count": roster.record[0], "at": roster.record[1].isoformat()}
        ),
    }


def _conditional(request: HttpRequest, response: HttpResponse) -> HttpResponseBase:
    """Tag the response with an ETag of its content; 304 if the client has it."""
    etag = f'"{hashlib.sha256(response.content).hexdigest()[:32]}"'
    response["ETag"] = etag
    patch_vary_headers(response, ["Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return get_conditional_response(request, etag=etag, response=response) or response

"""Endpoints: the widget as JSON and as an HTML fragment, the heartbeat and
the beacon.

Include them with ``path("whos-online/", include("whos_online.urls"))``.
The read endpoints answer conditional requests (an unchanged list costs a
304), vary on the cookie, and never show guest addresses; hidden users are
listed to staff only, and visitors who are not logged in are turned away
unless ``WHOS_ONLINE_ANONYMOUS_CAN_VIEW``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse
from django.utils.cache import (
    add_never_cache_headers,
    get_conditional_response,
    patch_cache_control,
    patch_vary_headers,
)
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.log import log_response
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from whos_online import guard, visibility
from whos_online.board import board_for
from whos_online.conf import get_config
from whos_online.decorate import decorations
from whos_online.page import viewer_of, visit_of
from whos_online.rendered import widget_html
from whos_online.rooms import keep_tab, leave_tab, tab_id, tab_renewal_seconds
from whos_online.roster import Roster, online_roster
from whos_online.store import get_store
from whos_online.tokens import room_from_token

# JSON that is safe inside a <script> element of an HTML page.
HTML_SAFE_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


class Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        self.status, self.reason = status, reason


def json_response(data: Any, status: int = 200) -> HttpResponse:
    """JSON with ``<``, ``>`` and ``&`` escaped, so a page may embed it."""
    body = json.dumps(data, ensure_ascii=False).translate(HTML_SAFE_JSON)
    return HttpResponse(body, status=status, content_type="application/json")


@require_GET
def online_json(request: HttpRequest) -> HttpResponseBase:
    try:
        roster = _roster_for(request)
    except Refused as refused:
        return json_response({"error": refused.reason}, status=refused.status)
    return _conditional(request, json_response(roster_data(roster)))


@require_GET
def online_fragment(request: HttpRequest) -> HttpResponseBase:
    try:
        roster = _roster_for(request)
    except Refused as refused:
        return HttpResponse(refused.reason, status=refused.status)
    return _conditional(request, HttpResponse(widget_html(roster, request)))


@require_GET
def who_is_online(request: HttpRequest) -> HttpResponseBase:
    """A page of everyone online, like phpBB's: users with where they are
    and when they were last seen, sorted (``?sort=name``, ``seen``,
    ``where``), filtered (``?show=users``, ``crawlers``) and in pages
    (``?page=2&per=50``), with the users seen today; how many guests and
    crawlers."""
    if not (get_config().anonymous_can_view or viewer_of(request).is_authenticated):
        return HttpResponse("Log in to see who is online.", status=403)
    board = board_for(request, request.GET)
    response = TemplateResponse(
        request,
        "whos_online/who_is_online.html",
        {"roster": board.roster, "board": board},
    )
    patch_vary_headers(response, ["Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_POST
@csrf_protect
def heartbeat(request: HttpRequest) -> HttpResponseBase:
    """Record a logged-in user now, at most once per half heartbeat interval
    (the middleware leaves heartbeats to this view)."""
    user = viewer_of(request)
    if not user.is_authenticated:
        return json_response({"error": "Log in first."}, status=403)
    config = get_config()
    least = config.heartbeat_seconds / 2
    # Records made this long ago keep the user "online" past the next
    # heartbeat, so a heartbeat before then needs none.
    fresh_for = config.away_after - config.heartbeat_seconds
    visit = visit_of(request)
    done = visit.heartbeat(least, fresh_for)
    if done == "failed":
        return outage_response(request)
    if done == "refused":
        response = json_response({"recorded": False}, status=429)
        response["Retry-After"] = str(int(least))
        return response
    response = HttpResponse(status=204)
    visit.issue_guard(response)  # which says when they were recorded
    return response


def outage_response(request: HttpRequest) -> HttpResponse:
    """A 503 for a Redis outage, which the circuit breaker has logged once
    already: logged here at DEBUG by Django's own ``log_response``, which
    marks it logged, so that the ``django.request`` logger (whose ERROR
    records mail the ``ADMINS``) does not log it again for every open tab's
    heartbeat."""
    response = json_response({"recorded": False}, status=503)
    log_response(
        "Who's online: Redis unreachable: %s",
        request.path,
        response=response,
        request=request,
        level="debug",
    )
    return response


@require_POST
@csrf_protect
def set_visibility(request: HttpRequest) -> HttpResponseBase:
    """A user appears offline (``invisible=1``) or online again (``0``), at
    once, or hides when they were last seen (``hide_last_seen=1``) or shows
    it again (``0``); back to ``next`` when it is a page of this site."""
    if not viewer_of(request).is_authenticated:
        return json_response({"error": "Log in first."}, status=403)
    if "hide_last_seen" in request.POST:
        return _choose_last_seen(request, request.POST["hide_last_seen"])
    if not get_config().allow_invisible:
        return json_response({"error": "Invisible mode is off."}, status=404)
    choice = request.POST.get("invisible")
    if choice not in ("0", "1"):
        return json_response({"error": "Say invisible=1 or 0."}, status=400)
    if not visibility.set_invisible(viewer_of(request), choice == "1"):
        return json_response({"error": "The choice cannot be kept now."}, status=503)
    response = _chosen(request)
    # Their next page records them as they chose, whatever Redis took now.
    guard.forget(get_store().config, response)
    return response


def _choose_last_seen(request: HttpRequest, choice: str) -> HttpResponse:
    if choice not in ("0", "1"):
        return json_response({"error": "Say hide_last_seen=1 or 0."}, status=400)
    if not visibility.set_hide_last_seen(viewer_of(request), choice == "1"):
        return json_response({"error": "The choice cannot be kept now."}, status=503)
    return _chosen(request)


def _chosen(request: HttpRequest) -> HttpResponse:
    """After a choice: back to ``next`` when it is a page of this site."""
    after = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        after, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return HttpResponseRedirect(after)
    return HttpResponse(status=204)


@csrf_exempt
@require_POST
def beacon(request: HttpRequest) -> HttpResponseBase:
    """A page served from a cache says its visitor is here.

    The middleware has already recorded the caller exactly as for any
    request (at most once per guard period); this adds the room the page
    names by token. With ``widgets=1`` it answers with the site's widget
    (and the room's) as they are now, for the page to show at once instead
    of what the cache kept. It changes nothing but the caller's own
    presence, so it needs no CSRF token, and its answer is never cached.
    """
    token = request.POST.get("room") or request.GET.get("room")
    room = None if not token else room_from_token(token, viewer_of(request))
    if room is not None:  # the cached page opened is in this room
        visit_of(request).enter_rooms({room})
    if request.POST.get("widgets") == "1":
        response: HttpResponse = json_response({"widgets": _widgets(request, room)})
    else:
        response = HttpResponse(status=204)
    if room is not None:
        visit_of(request).note_rooms({room}, response)
    add_never_cache_headers(response)
    return response


# The most rooms one ping names: a page is in few.
ROOMS_NAMED = 10


@csrf_exempt
@require_POST
def here(request: HttpRequest) -> HttpResponseBase:
    """A room page's script says its tab is still open (``tab``, and a
    ``room`` token for each room the page is in), or, with ``leave=1``,
    that it closed. The tab is in those rooms for ``WHOS_ONLINE_TAB_TIMEOUT``
    seconds more; a closed tab leaves them at once. It changes nothing but
    the caller's own presence in rooms it was given tokens for, so it needs
    no CSRF token (``navigator.sendBeacon`` cannot send one)."""
    tab = tab_id(request.POST.get("tab"))
    if tab is None:
        return json_response({"error": "Send the tab's id."}, status=400)
    if request.POST.get("leave") == "1":
        leave_tab(request, tab, every=get_config().tab_seconds / 3)
    else:
        tokens = request.POST.getlist("room")[:ROOMS_NAMED]
        found = {room_from_token(token, viewer_of(request)) for token in tokens}
        rooms = {room for room in found if room is not None}
        every = tab_renewal_seconds()
        keep_tab(request, tab, rooms, get_config().tab_timeout, every=every)
    response = HttpResponse(status=204)
    add_never_cache_headers(response)
    return response


@csrf_exempt
@require_POST
def decorate(request: HttpRequest) -> HttpResponseBase:
    """What ``{% whos_online_decorate %}``'s script shows beside the page's
    links (``path``, each a link's path) and in the elements it marks
    (``room``, each a room token): the badges of users whose profiles the
    links lead to, and "N viewing" of rooms, as the caller may learn them.
    It changes nothing but the caller's own presence, so it needs no CSRF
    token."""
    if not (get_config().anonymous_can_view or viewer_of(request).is_authenticated):
        return json_response({"error": "Log in to see who is online."}, status=403)
    found = decorations(
        request, request.POST.getlist("path"), request.POST.getlist("room")
    )
    response = json_response(found)
    patch_vary_headers(response, ["Cookie"])
    add_never_cache_headers(response)
    return response


def _widgets(request: HttpRequest, room: str | None) -> dict[str, str]:
    """The site's widget and ``room``'s, by room ("" for the site), as the
    caller may see them now."""
    if not (get_config().anonymous_can_view or viewer_of(request).is_authenticated):
        return {}
    rooms = [None] if room is None else [None, room]
    return {
        name or "": widget_html(online_roster(room=name, request=request), request)
        for name in rooms
    }


def _roster_for(request: HttpRequest, limit: int | None = None) -> Roster:
    if not (get_config().anonymous_can_view or viewer_of(request).is_authenticated):
        raise Refused(403, "Log in to see who is online.")
    room = None
    token = request.GET.get("room")
    if token is not None:
        room = room_from_token(token, viewer_of(request))
        if room is None:
            raise Refused(400, "Unknown or expired room.")
    return online_roster(limit, room=room, request=request)


def roster_data(roster: Roster) -> dict[str, Any]:
    """The roster as JSON: names and counts, never an address."""
    return {
        "available": roster.available,
        "window": roster.window,
        "counts": {
            "people": roster.counts.people,
            "users": roster.counts.users,
            # Withheld is not none: null, never a 0 that could be believed.
            "hidden": roster.counts.hidden if roster.shows_hidden_count else None,
            "guests": roster.counts.guests,
            "bots": roster.counts.bots,
            "total": roster.counts.total,
            "estimated": sorted(roster.counts.estimated),
        },
        "users": [
            {"name": online.name, "url": online.url, "hidden": online.hidden}
            for online in roster.users
        ],
        "more": roster.more,
        "names_shown": roster.shows_names,
        "bots": [bot.name for bot in roster.bots],
        "other_bots": roster.other_bots,
        "record": (
            None
            if roster.record is None
            else {"count": roster.record[0], "at": roster.record[1].isoformat()}
        ),
        "today": {
            "visitors": roster.today.visitors,
            "users": roster.today.users,
            "guests": roster.today.guests,
            "most_online": roster.today.most_online,
        },
    }


def _conditional(request: HttpRequest, response: HttpResponse) -> HttpResponseBase:
    """Tag the response with an ETag of its content; 304 if the client has it."""
    etag = f'"{hashlib.sha256(response.content).hexdigest()[:32]}"'
    response["ETag"] = etag
    patch_vary_headers(response, ["Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return get_conditional_response(request, etag=etag, response=response) or response

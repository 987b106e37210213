"""Where each user is: "Reading: the forum rules", like phpBB's list.

A site labels its pages, and the label is kept for each online user when
they are recorded (so it is the page they were on at their last record, at
most one guard period ago), in the same round trip. Labels are the site's
words, never the visitor's: a view decorated with ``@location("Reading the
forum")``, a class-based view with ``LocationMixin`` and ``location``, or
``WHOS_ONLINE_LOCATIONS = {"url name": "label"}``. A label marked for
translation (``gettext_lazy``) is stored in its source words and read in
the language of whoever reads it. The link is the page's
path. Requests that are not page views (fetch, HTMX, the app's own
endpoints, pages without a label) never overwrite a location.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest
from django.urls import Resolver404, ResolverMatch, resolve
from django.utils import translation
from django.utils.functional import Promise
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

from whos_online.conf import get_config
from whos_online.state import BoundedMemo

# (URLconf, path, path_info) -> the label of the page there ("" for none).
LocationMemo = BoundedMemo[tuple[str, str, str], str]

View = TypeVar("View", bound=Callable[..., Any])

ATTRIBUTE = "whos_online_location"
MAX_LABEL_LENGTH = 100
MAX_PATH_LENGTH = 200
# Stored as "label<TAB>path"; neither may hold the separator.
SEPARATOR = "\t"


@dataclass(frozen=True)
class Location:
    """Where a user is: the label's words as stored, and the page's path."""

    words: str
    url: str

    @property
    def label(self) -> str:
        """The label in the active language: a label the site marked for
        translation reads in the language of the page that shows it."""
        return gettext(self.words)


def location(label: str | Promise) -> Callable[[View], View]:
    """Label the decorated view: ``@location(_("Reading the forum"))``."""

    def decorator(view: View) -> View:
        return marked(view, ATTRIBUTE, label)

    return decorator


def marked(view: View, attribute: str, value: object) -> View:
    """``view`` with ``attribute`` set on a wrapper of it, so that a view
    decorated for one URL (a third-party view, in urls.py) keeps its other
    URLs as they were."""
    if iscoroutinefunction(view):

        @functools.wraps(view)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await view(*args, **kwargs)

    else:

        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return view(*args, **kwargs)

    setattr(wrapper, attribute, value)
    return wrapper  # type: ignore[return-value]


class LocationMixin:
    """For class-based views: set ``location`` to the page's label."""

    location: str | Promise = ""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        view = super().as_view(**initkwargs)  # type: ignore[misc]
        setattr(view, ATTRIBUTE, cls.location)
        return view


def location_of(request: HttpRequest, memo: LocationMemo | None = None) -> str:
    """What to store as the request's location, or ``""`` to leave it be."""
    words = label_of(request, memo)
    return f"{words}{SEPARATOR}{request.path}" if words else ""


def label_of(request: HttpRequest, memo: LocationMemo | None = None) -> str:
    """The label of the request's location in the site's own words, or
    ``""`` when it has none to store.

    Once Django resolved the request, its view says; before, or for a page
    answered without it (by a cache's middleware), the path is resolved, and
    what it resolves to may be kept in ``memo``.
    """
    if request.method != "GET":
        return ""
    match = getattr(request, "resolver_match", None)
    if match is not None:
        label = label_of_match(match)
    else:
        label = _label_of_path(request, memo)
    return label if label and may_store(request) else ""


def _label_of_path(request: HttpRequest, memo: LocationMemo | None) -> str:
    # Middleware may give the request a URLconf of its own; Django applies it
    # only after every middleware has run.
    urlconf = str(getattr(request, "urlconf", None) or get_config().root_urlconf)
    if memo is None:
        return _words(_label_of(request, urlconf))
    key = (urlconf, request.path, request.path_info)
    kept = memo.get(key)
    return memo.put(key, _words(_label_of(request, urlconf))) if kept is None else kept


def _words(label: object) -> str:
    """A label as stored: its words, at most ``MAX_LABEL_LENGTH`` of them; a
    lazy translation's in its source language, for each reader's page to
    translate."""
    if isinstance(label, Promise):
        with translation.override(None):
            label = str(label)
    return " ".join(str(label).split())[:MAX_LABEL_LENGTH]


def _label_of(request: HttpRequest, urlconf: str) -> object:
    try:
        match = resolve(request.path_info, urlconf)
    except Resolver404:
        return ""
    return _label_of_match(match)


def label_of_match(match: ResolverMatch) -> str:
    """The label, as stored, of the page a resolved URL leads to (``""``:
    none), whatever the request: :func:`label_of` says whether a request
    for it has a location to store."""
    return _words(_label_of_match(match))


def _label_of_match(match: ResolverMatch) -> object:
    return getattr(match.func, ATTRIBUTE, None) or get_config().locations.get(
        match.view_name, ""
    )


def may_store(request: HttpRequest) -> bool:
    """Whether a labelled page's request has a location to store: a GET page
    view (no script's fetch) of a path of bounded length."""
    return (
        request.method == "GET"
        and len(request.path) <= MAX_PATH_LENGTH
        and not _is_not_a_page_view(request)
    )


def parse(stored: bytes | str | None) -> Location | None:
    if not stored:
        return None
    text = stored.decode() if isinstance(stored, bytes) else stored
    label, _, url = text.partition(SEPARATOR)
    return Location(label, url) if is_local_path(url) else None


def is_local_path(url: str) -> bool:
    """Whether ``url`` is a path of this site, never a link elsewhere
    (``//host/``, ``/\\host/`` are)."""
    return url.startswith("/") and url_has_allowed_host_and_scheme(
        url, allowed_hosts=None
    )


def _is_not_a_page_view(request: HttpRequest) -> bool:
    # META itself: request.headers would copy all of META, on every guarded
    # page view of a user.
    meta = request.META
    return (
        meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest"
        or "HTTP_HX_REQUEST" in meta
        or meta.get("HTTP_SEC_FETCH_DEST", "document") not in ("document", "")
    )

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import admin
from django.contrib.auth import get_user_model, login, logout
from django.contrib.auth.models import Group
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template import engines
from django.template.response import TemplateResponse
from django.urls import include, path
from django.utils import timezone
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.decorators.cache import cache_page
from django.views.decorators.csrf import csrf_protect

from tests import editing_admin
from whos_online.locations import LocationMixin, location
from whos_online.rooms import RoomMixin, records_room


def page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a page")


def post(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse("a post, in no room but where a URL puts it in one")


def widget(request: HttpRequest) -> HttpResponse:
    template = engines["django"].from_string("{% load whos_online %}{% whos_online %}")
    return HttpResponse(template.render({}, request))


def log_in(request: HttpRequest, pk: int) -> HttpResponse:
    login(request, get_user_model()._default_manager.get(pk=pk))
    return HttpResponse("logged in")


def log_in_and_show(request: HttpRequest, pk: int) -> HttpResponse:
    """Logs the user in and answers with a page of the widget, not a
    redirect: the page is made after the login."""
    login(request, get_user_model()._default_manager.get(pk=pk))
    template = engines["django"].from_string("{% load whos_online %}{% whos_online %}")
    return HttpResponse(template.render({}, request))


def log_out(request: HttpRequest) -> HttpResponse:
    logout(request)
    return HttpResponse("logged out")


@records_room("thread:{pk}")
def thread(request: HttpRequest, pk: int) -> HttpResponse:
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online room=room refresh=30 %}"
    )
    return HttpResponse(template.render({"room": f"thread:{pk}"}, request))


@records_room("thread:{pk}")
async def async_thread(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse("an async thread")


class Topic(RoomMixin, View):
    room_name = "topic:{pk}"

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        return HttpResponse("a topic")


@records_room("not a room")
def bad_room(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a page with a bad room name")


@records_room("thread:{missing}")
def unformattable_room(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a page whose room name does not format")


@cache_page(60)
def cached(request: HttpRequest) -> HttpResponse:
    """A page served from Django's cache after its first render."""
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_beacon room='thread:1' %}"
    )
    return HttpResponse(template.render({}, request))


EVERY_OUTPUT = (
    "{% load whos_online %}{% whos_online %}"
    "[count {% online_count %} users {% online_count 'users' %}]"
    "{% presence_list subjects as rows %}"
    "[list {% for row in rows %}{{ row.status }} {{ row.last_seen|date:'c' }}"
    "{{ row.last_seen_label }}{% endfor %}]"
    "[badge {% online_badge subject %}]"
    "[status {{ subject|online_status }}]"
    "[seen {{ subject|last_seen|date:'c' }}{{ subject|last_seen_label }}]"
    "{% whos_online room='thread:1' %}"
    "{% room_counts rooms as viewing %}"
    "[rooms{% for room, here in viewing %} {{ here.users }}{% endfor %}]"
)


def every_output(request: HttpRequest, username: str) -> HttpResponse:
    """Every template output about the user ``username``, on one page."""
    subject = get_object_or_404(get_user_model(), username=username)
    template = engines["django"].from_string(EVERY_OUTPUT)
    context = {"subject": subject, "subjects": [subject], "rooms": ["thread:1"]}
    return HttpResponse(template.render(context, request))


PERSONAL_OUTPUTS = (
    "{% load whos_online %}{% csrf_token %}"
    "{% whos_online room='thread:1' refresh=30 %}"
    "{% whos_online_beacon room='thread:1' %}"
    "{% whos_online_visibility %}{% whos_online_heartbeat %}"
)


@records_room("thread:{pk}")
def cached_thread(request: HttpRequest, pk: int) -> HttpResponse:
    """A thread page kept by ``cache_page``: every tag that could carry its
    viewer."""
    template = engines["django"].from_string(PERSONAL_OUTPUTS)
    return HttpResponse(template.render({}, request))


def widget_of_room(request: HttpRequest, room: str) -> HttpResponse:
    """A widget whose room comes from the URL, as sites do (and attackers)."""
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online room=room %}"
    )
    return HttpResponse(template.render({"room": room}, request))


def busy_page(request: HttpRequest) -> HttpResponse:
    """A header with five counts beside the widget; in the time zone
    ``?tz=`` names, as a site's own middleware would set it."""
    template = engines["django"].from_string(
        "{% load whos_online %}"
        + '{% online_count %}{% online_count "users" %}{% online_count "guests" %}'
        + '{% online_count "bots" %}{% online_count "total" %}{% whos_online %}'
    )
    with timezone.override(ZoneInfo(request.GET.get("tz", "UTC"))):
        return HttpResponse(template.render({}, request))


def count_only(request: HttpRequest) -> HttpResponse:
    """A header's count, with no widget on the page."""
    template = engines["django"].from_string("{% load whos_online %}{% online_count %}")
    return HttpResponse(template.render({}, request))


def thread_of_authors(request: HttpRequest) -> HttpResponse:
    """A thread whose twenty posts each show their author's badge
    (``?badge=seen``: when they were last seen, ``both``: both;
    ``?widget=first`` or ``last``: and the widget, before or after them)."""
    badge = {
        "status": "{{ author|online_status }}",
        "seen": "{{ author|last_seen|date:'c' }}",
        "both": "{{ author|online_status }} {{ author|last_seen|date:'c' }}",
    }[request.GET.get("badge", "status")]
    template = engines["django"].from_string(
        "{% load whos_online %}{% if widget == 'first' %}{% whos_online %}{% endif %}"
        "{% for author in authors %}{{ author.username }}="
        + badge
        + ";{% endfor %}{% if widget == 'last' %}{% whos_online %}{% endif %}"
    )
    authors = (
        get_user_model()
        ._default_manager.filter(username__startswith="author")
        .order_by("username")
    )
    context = {"authors": authors, "widget": request.GET.get("widget")}
    return HttpResponse(template.render(context, request))


def third_party_topic(request: HttpRequest, pk: int) -> HttpResponse:
    """A forum's view the site did not write (a group stands in for its
    topic): the site names its room in the template or in settings."""
    topic = get_object_or_404(Group, pk=pk)
    source = {
        "instance": "{% whos_online room=topic %}",
        "page": "{% page_room as room %}{% whos_online room=room %}",
        "none": "",
    }[request.GET.get("widget", "none")]
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return HttpResponse(template.render({"topic": topic}, request))


@records_room("thread:{pk}")
def missing_thread(request: HttpRequest, pk: int) -> HttpResponse:
    """A decorated view whose threads do not exist."""
    return HttpResponse("no such thread", status=404)


@location("Reading the forum")
def forum(request: HttpRequest) -> HttpResponse:
    return HttpResponse("the forum")


@location(gettext_lazy("Who is online"))
def lazily_labelled(request: HttpRequest) -> HttpResponse:
    """A page labelled in the words of each visitor's language."""
    return HttpResponse("a translated page")


@csrf_protect
def jinja2_page(request: HttpRequest) -> HttpResponse:
    """A page of a site that renders with Jinja2 (tests/jinja2/page.html)."""
    return TemplateResponse(request, "page.html")


@csrf_protect
def django_jinja_page(request: HttpRequest) -> HttpResponse:
    """A page of a site that renders with django-jinja
    (tests/django_jinja_site/templates/page.jinja)."""
    return TemplateResponse(request, "page.jinja")


def profile(request: HttpRequest, slug: str = "", **found: object) -> HttpResponse:
    """A user's profile page, found by primary key or by username (the slug
    is for people to read, as forums have it)."""
    get_object_or_404(get_user_model(), **found)
    return HttpResponse("a profile")


def page_with_scripts(request: HttpRequest) -> HttpResponse:
    """The heartbeat's and the toggle's tags, and no form of the page's own."""
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_heartbeat %}{% whos_online_visibility %}"
    )
    return HttpResponse(template.render({}, request))


def decorated_page(request: HttpRequest) -> HttpResponse:
    """A page of links to profiles and to threads, and a marked element,
    with the script that decorates them."""
    template = engines["django"].from_string(
        "{% load whos_online %}<a href='/people/1/'>alice</a>"
        "<span data-whos-online-viewing='{% room_token \"thread:1\" %}'></span>"
        "{% whos_online_decorate refresh=30 %}"
    )
    return HttpResponse(template.render({}, request))


class Members(LocationMixin, View):
    location = "Looking at the members"

    def get(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("the members")


urlpatterns = [
    # Views of other URLs again, put in a room and labelled for this URL only.
    path("post/<int:pk>/", post),
    path("shared-topic/<int:pk>/", records_room("topic:{pk}")(post)),
    path("shared-page/", location("Reading a shared page")(page)),
    path("forum/", forum),
    path(
        "forum/",
        include(([path("<int:pk>/", third_party_topic, name="topic")], "board")),
    ),
    path("missing-thread/<int:pk>/", missing_thread),
    path("members/", Members.as_view()),
    path("people/<int:pk>/", profile, name="profile"),
    path("people/<int:pk>/<slug:slug>/", profile, name="profile"),
    path("u/<str:username>/", profile, name="profile-by-name"),
    path("decorated/", decorated_page),
    path("page-with-scripts/", page_with_scripts),
    path("lazily-labelled/", lazily_labelled),
    path("jinja2-page/", jinja2_page),
    path("django-jinja-page/", django_jinja_page),
    path("busy-page/", busy_page),
    path("count-only/", count_only),
    path("thread-of-authors/", thread_of_authors),
    path("cached/", cached),
    path("every-output/<str:username>/", every_output),
    path("cached-output/<str:username>/", cache_page(60)(every_output)),
    path("cached-thread/<int:pk>/", cache_page(60)(cached_thread)),
    path("uncached-thread/<int:pk>/", cached_thread),
    path("room-widget/<str:room>/", widget_of_room),
    path("", page),
    path("widget/", widget),
    path("login/<int:pk>/", log_in),
    path("login-and-show/<int:pk>/", log_in_and_show),
    path("logout/", log_out),
    path("thread/<int:pk>/", thread, name="thread"),
    path("async-thread/<int:pk>/", async_thread),
    path("topic/<int:pk>/", Topic.as_view()),
    path("bad-room/", bad_room),
    path("unformattable-room/", unformattable_room),
    path("whos-online/", include("whos_online.urls")),
    path("admin/", admin.site.urls),
    path("editing-admin/", editing_admin.site.urls),
    path("every-admin/", editing_admin.every.urls),
]

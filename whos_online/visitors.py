"""Who a request comes from, as presence knows them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.utils.module_loading import import_string

from whos_online.addresses import client_address
from whos_online.bots import bot_name
from whos_online.conf import conf
from whos_online.presence import Kind


@dataclass(frozen=True)
class Visitor:
    kind: Kind
    member: str
    """The user's primary key, the guest's address or the bot's name."""

    @property
    def is_person(self) -> bool:
        return self.kind != "bots"

    @property
    def guest_address(self) -> str | None:
        return self.member if self.kind == "guests" else None

    @property
    def user_pk(self) -> str | None:
        return self.member if self.kind in ("users", "hidden") else None


def identify(request: HttpRequest, user_pk: str | None = None) -> Visitor | None:
    """The visitor, or ``None`` for a guest without a usable address.

    ``user_pk`` is the user a verified guard names: trusting it spares
    loading the session and the user, unless ``WHOS_ONLINE_IS_HIDDEN`` must
    look at the user.
    """
    if user_pk is not None and conf.IS_HIDDEN is None:
        return Visitor("users", user_pk)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return Visitor("hidden" if is_hidden(user) else "users", str(user.pk))
    if conf.DETECT_BOTS:
        user_agent = request.META.get("HTTP_USER_AGENT", "")
        name = bot_name(user_agent) if isinstance(user_agent, str) else None
        if name is not None:
            return Visitor("bots", name)
    address = client_address(request.META)
    return None if address is None else Visitor("guests", address)


def is_hidden(user: Any) -> bool:
    """Whether ``WHOS_ONLINE_IS_HIDDEN`` says to keep ``user`` off public lists."""
    path = conf.IS_HIDDEN
    return path is not None and bool(_import(path)(user))


@functools.cache
def _import(path: str) -> Callable[[Any], object]:
    return import_string(path)  # type: ignore[no-any-return]

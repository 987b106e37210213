"""System checks for a site's configuration mistakes."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpResponse
from django.utils.translation import gettext_lazy
from pytest_django.fixtures import Settings as SettingsWrapper

from whos_online import checks, rules, url_checks
from whos_online.conf import Config, is_setting
from whos_online.middleware import WhosOnlineMiddleware

SESSION = "django.contrib.sessions.middleware.SessionMiddleware"
AUTH = "django.contrib.auth.middleware.AuthenticationMiddleware"
OURS = "whos_online.middleware.WhosOnlineMiddleware"


def ids(messages: list[Any]) -> list[str]:
    return [message.id for message in messages]


class SiteMiddleware(WhosOnlineMiddleware):
    """A site's own subclass of the middleware."""


def test_the_test_settings_pass_every_check() -> None:
    from django.core.checks import run_checks

    assert [m for m in run_checks() if str(m.id).startswith("whos_online")] == []


def test_the_checks_run_without_a_secret_key(settings: SettingsWrapper) -> None:
    """A build step may run ``manage.py check`` or ``migrate`` with an empty
    ``SECRET_KEY``, which Django's own checks allow: the app's checks read
    the settings object, which reads it only to make a guard."""
    settings.SECRET_KEY = ""
    assert our_ids() == []


def test_missing_middleware_is_e001(settings: SettingsWrapper) -> None:
    settings.MIDDLEWARE = [SESSION, AUTH]
    assert ids(checks.check_middleware()) == ["whos_online.E001"]


def test_duplicated_middleware_is_e002(settings: SettingsWrapper) -> None:
    settings.MIDDLEWARE = [SESSION, AUTH, OURS, OURS]
    assert ids(checks.check_middleware()) == ["whos_online.E002"]


def test_middleware_before_authentication_is_e003(settings: SettingsWrapper) -> None:
    settings.MIDDLEWARE = [SESSION, OURS, AUTH]
    assert ids(checks.check_middleware()) == ["whos_online.E003"]


def test_middleware_without_authentication_is_e003(settings: SettingsWrapper) -> None:
    settings.MIDDLEWARE = [SESSION, OURS]
    assert ids(checks.check_middleware()) == ["whos_online.E003"]


def test_a_subclass_of_the_middleware_counts(settings: SettingsWrapper) -> None:
    settings.MIDDLEWARE = [SESSION, AUTH, "tests.test_checks.SiteMiddleware"]
    assert checks.check_middleware() == []


def test_unimportable_middleware_entries_are_left_to_django(
    settings: SettingsWrapper,
) -> None:
    settings.MIDDLEWARE = [SESSION, AUTH, "no.such.Middleware", OURS]
    assert checks.check_middleware() == []


def test_an_unknown_cache_alias_is_e004(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "nope"
    assert ids(checks.check_cache()) == ["whos_online.E004"]


def test_a_cache_that_is_not_redis_is_e005(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "locmem"
    messages = checks.check_cache()
    assert ids(messages) == ["whos_online.E005"]
    assert "LocMemCache" in messages[0].msg


def test_djangos_own_redis_cache_is_accepted(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "builtin"
    assert checks.check_cache() == []


def test_a_guard_as_long_as_the_window_is_e006(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_WINDOW = 300
    settings.WHOS_ONLINE_GUARD_SECONDS = 300
    assert ids(checks.check_guard()) == ["whos_online.E006"]


def test_a_guard_shorter_than_the_window_passes(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_WINDOW = 301
    settings.WHOS_ONLINE_GUARD_SECONDS = 300
    assert checks.check_guard() == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CACHE_ALIAS", 3),
        ("CACHE_ALIAS", ""),
        ("KEY_PREFIX", "a{b}"),
        ("KEY_PREFIX", ""),
        ("WINDOW", "900"),
        ("WINDOW", 0),
        ("WINDOW", 9.5),
        ("WINDOW", True),
        ("GUARD_SECONDS", -1),
        ("GUARD_COOKIE_NAME", None),
        ("MAX_NAMES", -1),
        ("MAX_MEMBERS", 0),
        ("SHARDS", 0),
        ("SHARDS", 1025),
        ("SHARDS", "6"),
        ("PROXY_COUNT", "1"),
        ("TRUSTED_PROXIES", "10.0.0.0/8"),
        ("TRUSTED_PROXIES", ["10.0.0.0/33"]),
        ("ROOM_TOKEN_MAX_AGE", 0),
        ("ROOM_TOKEN_MAX_AGE", "1"),
        ("FAILURE_BACKOFF", -1),
        ("AWAY_AFTER", 0),
        ("HEARTBEAT_SECONDS", 1),
        ("IS_HIDDEN", 3),
        ("DETECT_BOTS", "yes"),
        ("ANONYMOUS_CAN_VIEW", 1),
        ("IPV6_PREFIX", 0),
        ("IPV6_PREFIX", 129),
        ("IPV6_PREFIX", "64"),
    ],
)
def test_a_setting_of_the_wrong_type_or_range_is_e007(
    settings: SettingsWrapper, name: str, value: object
) -> None:
    setattr(settings, f"WHOS_ONLINE_{name}", value)
    messages = checks.check_settings()
    assert ids(messages) == ["whos_online.E007"]
    assert f"WHOS_ONLINE_{name}" in messages[0].msg


def test_translated_location_labels_pass(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {"thread": gettext_lazy("Reading a thread")}
    assert checks.check_settings() == []


def test_wrongly_typed_settings_do_not_crash_the_other_checks(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = 3
    settings.WHOS_ONLINE_WINDOW = "900"
    assert checks.check_cache() == []
    assert checks.check_guard() == []


@pytest.mark.parametrize(
    ("name", "value"),
    [("ROOM_TOKEN_MAX_AGE", 60), ("TRUSTED_PROXIES", ("10.0.0.0/8", "::1/128"))],
)
def test_valid_unusual_values_pass(
    settings: SettingsWrapper, name: str, value: object
) -> None:
    setattr(settings, f"WHOS_ONLINE_{name}", value)
    assert checks.check_settings() == []


def test_away_after_as_long_as_the_window_is_e008(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_AWAY_AFTER = 900
    assert "whos_online.E008" in ids(checks.check_statuses())


def test_away_after_shorter_than_the_guard_is_w001(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_AWAY_AFTER = 120
    assert ids(checks.check_statuses()) == ["whos_online.W001"]


def test_the_default_statuses_pass() -> None:
    assert checks.check_statuses() == []


def test_wrongly_typed_status_settings_are_left_to_e007(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_AWAY_AFTER = "300"
    assert checks.check_statuses() == []


@pytest.mark.parametrize(
    "path",
    ["tests.hiding.no_such_function", "no.such.module.f", "tests.hiding.NOT_CALLABLE"],
)
def test_an_unusable_is_hidden_is_e009(settings: SettingsWrapper, path: str) -> None:
    settings.WHOS_ONLINE_IS_HIDDEN = path
    assert ids(checks.check_imports()) == ["whos_online.E009"]


def test_an_importable_is_hidden_passes(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    assert checks.check_imports() == []


def test_no_dotted_paths_pass() -> None:
    assert checks.check_imports() == []


def test_a_connection_factory_that_does_not_import_is_e010(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "no.such.module.make_client"
    assert ids(checks.check_imports()) == ["whos_online.E010"]


def test_urls_not_included_is_w002(settings: SettingsWrapper) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    assert ids(url_checks.check_urls()) == ["whos_online.W002"]


def test_included_urls_pass() -> None:
    assert url_checks.check_urls() == []


def test_a_cache_without_a_socket_timeout_is_w003(settings: SettingsWrapper) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "bare": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://x"},
    }
    settings.WHOS_ONLINE_CACHE_ALIAS = "bare"
    assert ids(checks.check_cache()) == ["whos_online.W003"]


def test_djangos_cache_without_a_socket_timeout_is_w003(
    settings: SettingsWrapper,
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "bare": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://x",
        },
    }
    settings.WHOS_ONLINE_CACHE_ALIAS = "bare"
    assert ids(checks.check_cache()) == ["whos_online.W003"]


def test_a_site_without_the_app_installed_fails_to_start_with_a_clear_error() -> None:
    """In a process of its own, as the site would start: nothing of the app
    is imported before Django loads the middleware."""
    started = subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.core.wsgi import get_wsgi_application\nget_wsgi_application()",
        ],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings_without_whos_online",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    last_line = started.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured")
    assert "INSTALLED_APPS" in last_line


def test_the_middleware_without_the_app_installed_is_a_clear_error(
    settings: SettingsWrapper,
) -> None:
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "whos_online"]
    with pytest.raises(ImproperlyConfigured, match="INSTALLED_APPS"):
        WhosOnlineMiddleware(lambda request: HttpResponse())


def our_ids(**options: Any) -> list[str]:
    """The ids of the app's messages ``manage.py check`` reports."""
    from django.core.checks import run_checks

    return [str(m.id) for m in run_checks(**options) if str(m.id).startswith("whos")]


def forget_migrating_the_app() -> None:
    recorder = MigrationRecorder(connection)
    for name in ("0001_initial", "0002_visibility", "0003_last_seen_choice"):
        recorder.record_unapplied("whos_online", name)


@pytest.mark.django_db
def test_unapplied_migrations_are_w004_with_check_database() -> None:
    forget_migrating_the_app()
    assert our_ids(databases=["default"]) == ["whos_online.W004"]


@pytest.mark.django_db
def test_w004_counts_the_apps_own_migrations_alone() -> None:
    MigrationRecorder(connection).migration_qs.all().delete()  # a new database
    from django.core.checks import run_checks

    (message,) = [
        m for m in run_checks(databases=["default"]) if m.id == "whos_online.W004"
    ]
    assert "lacks 3 migration(s) of whos_online" in message.msg


@pytest.mark.django_db
def test_unapplied_migrations_are_not_looked_for_without_a_database() -> None:
    forget_migrating_the_app()
    assert our_ids() == []


class NotHere:
    """A database router that keeps the app out of every database."""

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return False if app_label == "whos_online" else None


@pytest.mark.django_db
def test_a_database_the_app_is_not_routed_to_is_not_looked_at(
    settings: SettingsWrapper,
) -> None:
    forget_migrating_the_app()
    settings.DATABASE_ROUTERS = [f"{__name__}.NotHere"]
    assert our_ids(databases=["default"]) == []


@pytest.mark.django_db
def test_applied_migrations_pass_check_database() -> None:
    assert our_ids(databases=["default"]) == []


@pytest.mark.django_db
def test_manage_py_check_database_reports_w004() -> None:
    forget_migrating_the_app()
    err = StringIO()
    call_command("check", "--database", "default", stderr=err, stdout=StringIO())
    assert "whos_online.W004" in err.getvalue()
    assert "migrate whos_online" in err.getvalue()


def test_a_misspelt_setting_is_w005_naming_the_right_one(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_WINDOWS = 600
    (message,) = checks.check_setting_names()
    assert message.id == "whos_online.W005"
    assert "WHOS_ONLINE_WINDOWS" in message.msg
    assert message.hint is not None and "WHOS_ONLINE_WINDOW" in message.hint


def test_admin_editing_without_the_admin_installed_is_w008(
    settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WHOS_ONLINE_ADMIN_EDITING = True
    monkeypatch.setattr(
        django_apps, "is_installed", lambda name: name != "django.contrib.admin"
    )
    (message,) = checks.check_admin_editing()
    assert message.id == "whos_online.W008"
    assert message.hint is not None and "django.contrib.admin" in message.hint


def test_the_deprecated_admin_editing_setting_is_w008_naming_the_site_hook(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ADMIN_EDITING = True
    (message,) = checks.check_admin_editing()
    assert message.id == "whos_online.W008"
    assert "deprecated" in message.msg
    assert message.hint is not None and "EditingAdminSite" in message.hint


def test_without_the_admin_editing_setting_w008_says_nothing() -> None:
    assert checks.check_admin_editing() == []


def test_an_unknown_setting_unlike_any_is_w005(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_FLAVOUR = "vanilla"
    (message,) = checks.check_setting_names()
    assert message.id == "whos_online.W005"
    assert "WHOS_ONLINE_FLAVOUR" in message.msg


def test_a_setting_the_app_no_longer_has_is_w005_saying_what_became_of_it(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_ROOMS = 10_000
    (message,) = checks.check_setting_names()
    assert message.id == "whos_online.W005"
    assert message.hint is not None and "per member" in message.hint


def test_every_setting_of_the_app_is_known() -> None:
    known = {f"WHOS_ONLINE_{name}" for name in rules.SETTING_RULES}
    fields = {f.name for f in dataclasses.fields(Config) if is_setting(f)}
    assert known == {f"WHOS_ONLINE_{name.upper()}" for name in fields}


def test_a_location_key_that_is_not_a_url_name_is_w006(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {"thread": "Reading", "forum:thred": "Typo"}
    (message,) = url_checks.check_locations()
    assert message.id == "whos_online.W006"
    assert "'forum:thred'" in message.msg


def test_location_keys_that_are_url_names_pass(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {
        "thread": "Reading a thread",
        "whos_online:page": "Who is online",
    }
    assert url_checks.check_locations() == []


def test_locations_that_are_not_a_dict_are_left_to_e007(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_LOCATIONS = ["thread"]
    assert url_checks.check_locations() == []
    assert ids(checks.check_settings()) == ["whos_online.E007"]


def test_the_new_checks_run_with_manage_py_check(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_WINDOWS = 600
    settings.WHOS_ONLINE_LOCATIONS = {"nowhere": "Nowhere"}
    assert sorted(our_ids()) == ["whos_online.W005", "whos_online.W006"]


def test_an_unusable_can_see_is_e012(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.no_such_rule"
    assert ids(checks.check_imports()) == ["whos_online.E012"]


def test_an_importable_can_see_passes(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    assert checks.check_imports() == []

"""Presence lives in Redis; the database keeps only users' own choices.

``OnlineNow`` has no table: it is there so that the staff page appears on
the admin index, as "Who's online › Online now" (see :mod:`whos_online.admin`).
``Visibility`` keeps whether a user chose to appear offline.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class OnlineNow(models.Model):
    # Declared rather than left to DEFAULT_AUTO_FIELD, so that no site's
    # setting ever makes a migration for a table that does not exist.
    id = models.AutoField(primary_key=True)

    class Meta:
        managed = False
        verbose_name = _("online now")
        verbose_name_plural = _("online now")
        default_permissions = ()


class Visibility(models.Model):
    """A user's own choices: to appear offline ("invisible"), and to hide
    when they were last seen. Kept in the database, and only there: every
    record of the user and every output reads them (see
    :mod:`whos_online.gate`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="whos_online_visibility",
    )
    invisible = models.BooleanField(_("appear offline"), default=False)
    hide_last_seen = models.BooleanField(_("hide when I was last seen"), default=False)

    class Meta:
        verbose_name = _("online visibility")
        verbose_name_plural = _("online visibility")

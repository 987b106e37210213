"""No data of the app lives in the database: presence is kept in Redis.

The one model has no table. It is there so that the staff page appears on
the admin index, as "Who's online › Online now"; see :mod:`whos_online.admin`.
"""

from __future__ import annotations

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

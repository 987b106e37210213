"""A tiny admin site in one of four looks, for tests/test_admin_themes.py:
Django's own admin, django-unfold, django-grappelli or django-jazzmin,
chosen by the ``THEMED_ADMIN`` environment variable (the versions pinned in
requirements/browser.txt). Every ModelAdmin shows who else is editing
(``EditingAdminSite``, as docs/admin-editing.md says), and the app's staff
page is in it."""

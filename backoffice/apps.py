from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


# The module, not the class: a class imported here would count as one of this module's configs.
class StaffAdminConfig(admin_apps.AdminConfig):
    """Django's admin app with the back office's site as `admin.site`: every staff page needs
    a second factor (backoffice.sites). Named in INSTALLED_APPS instead of
    `django.contrib.admin`."""

    default = False  # named explicitly; `backoffice` alone is BackofficeConfig
    default_site = "backoffice.sites.StaffAdminSite"


class BackofficeConfig(AppConfig):
    default = True
    name = "backoffice"
    # Its one business table is the approval requests (four eyes); its lockouts sit under
    # "Administration" (backoffice.sites).
    verbose_name = "Approvals"

    def ready(self):
        from axes.signals import user_locked_out
        from django.contrib import admin

        from backoffice.lockouts import on_user_locked_out
        from backoffice.reencryption import STAFF_APP_KEYS
        from core import reencryption

        admin.site.site_header = "TX back office"
        admin.site.site_title = "TX back office"
        admin.site.index_title = "Today's work"
        # The work queues first, then the apps' models (backoffice/templates/backoffice/).
        admin.site.index_template = "backoffice/index.html"
        # Each lockout of a staff username is recorded and logged (backoffice.lockouts).
        user_locked_out.connect(on_user_locked_out, dispatch_uid="backoffice.lockouts")
        # The staff's authenticator-app keys re-encrypt under a new key with the other
        # encrypted fields (`manage.py reencrypt_sensitive_data`).
        reencryption.register(STAFF_APP_KEYS)

from django.apps import AppConfig


class BackofficeConfig(AppConfig):
    name = "backoffice"
    verbose_name = "Back office"

    def ready(self):
        from django.contrib import admin

        admin.site.site_header = "TX back office"
        admin.site.site_title = "TX back office"
        admin.site.index_title = "TX back office"
        # The work queues first, then the apps' models (backoffice/templates/backoffice/).
        admin.site.index_template = "backoffice/index.html"

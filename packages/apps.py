from django.apps import AppConfig


class PackagesConfig(AppConfig):
    name = "packages"
    verbose_name = "Packages and publications"

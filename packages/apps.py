from django.apps import AppConfig


class PackagesConfig(AppConfig):
    name = "packages"
    verbose_name = "Packages and publications"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from packages import lookups, tasks  # noqa: F401  (registers `__any`; the tasks)
        from packages.sessions import shorten_privileged_session

        user_logged_in.connect(shorten_privileged_session, dispatch_uid="privileged-session-age")

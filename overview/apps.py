from django.apps import AppConfig


class OverviewConfig(AppConfig):
    name = "overview"
    verbose_name = "Phasing overview, problems and controller"

    def ready(self) -> None:
        from overview import tasks as controller_tasks  # noqa: F401  (queued by name)
        from overview.monitoring import checks  # noqa: F401  (registers system checks)
        from overview.notices import delivery, tasks  # noqa: F401  (registers the tasks)
        from packages.services.announcements import listener_register

        # Webhooks and chat notices hear of events after commit (packages never imports us).
        listener_register(delivery.on_announcement)

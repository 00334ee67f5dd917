from django.apps import AppConfig


class OverviewConfig(AppConfig):
    name = "overview"
    verbose_name = "Phasing overview, problems and controller"

    def ready(self) -> None:
        pass

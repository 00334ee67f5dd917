"""What the dependents judge reads: crashes of other packages on machines with a library's
new version and on machines with its previous one (overview.judges.dependents)."""

from __future__ import annotations

from django.db import models

from packages.models import Publication, SourcePackage


class DependentCrashCount(models.Model):
    """Crash events of one dependent (a package whose reports list a binary of the
    library's update, at one of its own versions) in one UTC hour, split by the library's
    version on the crashing machine: the update's (`on_new`) or the one it replaces
    (`on_old`). A machine counts once per bucket and hour, as in HourlyCrashCount.

    Kept by the ingest for the updates in phasing only (their binaries, from the reports'
    dependency versions), so it grows with the dependents of the few libraries being
    phased, not with every dependency of every report."""

    library = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="+")
    dependent = models.ForeignKey(SourcePackage, on_delete=models.CASCADE, related_name="+")
    dependent_version = models.CharField(max_length=200)
    hour = models.DateTimeField()
    on_new = models.PositiveIntegerField(default=0)
    on_old = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Also the index of the judge's read: a library's dependents, by hour.
            models.UniqueConstraint(
                name="one_dependent_count",
                fields=("library", "hour", "dependent", "dependent_version"),
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.dependent_id} {self.dependent_version} {self.hour:%Y-%m-%d %H}h: "
            f"{self.on_new} with {self.library_id}, {self.on_old} without"
        )

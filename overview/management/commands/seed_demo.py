"""Fill the database from the simulator by replaying the recent past through the controller.

The histories on the pages are the controller's own: the simulated archive is synced and
the real controller ticks hour by hour over the last days, halting the updates whose
crash reports show a regression (and emailing their signers). Updates published before
the replay carry no regression (their problems were dealt with before), so the halts fall
over the week as their regressions show, not all at its first tick. A false alarm is
overridden by the demo triager and resumed by the demo archive admin, as people would.
The demo also holds one update for data (a package policy that wants more reports of the
previous version), freezes one release a few hours before the end (a point release),
and leaves one release to 100% waiting for a second archive admin's sign-off
(overview.demo_scenes). Re-running continues from where the last run stopped, so nothing
is made twice.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db.models import Q
from django.test.utils import override_settings
from django.utils import timezone
from tqdm import tqdm

from overview import demo_scenes, demo_seeding
from overview.controller import tick as controller
from overview.controller.notifications import notifications_sent_here
from overview.evidence.crash_sync import crashes_sync
from overview.evidence.sources.simulator import SimulatedCrashFeed
from overview.judges.local import LocalCrashSource
from overview.models import ProblemKind
from overview.triage.overrides import override_create
from packages.models import PhasingState, Publication, SourceSync
from packages.roles import ARCHIVE_ADMINS, TRIAGERS
from packages.services import publication_resume, write_back_deferred
from packages.services.sync import publications_sync
from packages.services.writeback import percentages_mark_applied
from packages.sources.simulator import Simulator

REPLAY = "seed_demo:replay"


def packages_for(publications: int, *, releases: int, mean_days: float) -> int:
    """Packages needed for about `publications` updates in phasing at once.

    An update is in phasing for about two and a half days (54 hours, plus halts), so a
    release holds about packages × 2.5 / mean_days of them.
    """
    return max(50, math.ceil(publications * mean_days / (2.5 * releases)))


class Command(BaseCommand):
    help = "Seed a demo archive from the simulator (safe to re-run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--publications", type=int, default=0, help="aim for this many in phasing"
        )
        parser.add_argument("--packages", type=int, default=0, help="source packages (default 300)")
        parser.add_argument(
            "--baseline-days", type=int, default=7, help="days of crash reports before the replay"
        )
        parser.add_argument("--days", type=int, default=7, help="days of history to replay")
        parser.add_argument(
            # Every 3 hours: half the policy's interval, so no step is late by more than
            # a tick, at a third of the cost of hourly ticks (each tick judges every update).
            "--step-hours",
            type=int,
            default=3,
            help="hours between replayed ticks",
        )
        parser.add_argument(
            "--mean-days", type=float, default=40.0, help="mean days between updates of a package"
        )
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing when publications exist, unless a replay stopped part-way",
        )

    def handle(self, *args, **options) -> None:
        done = SourceSync.objects.filter(name=REPLAY).first()
        # A replay stopped part-way (make run stopped while seeding) goes on from there.
        unfinished = done is not None and done.last_summary.get("finished") is False
        if options["if_empty"] and Publication.objects.exists() and not unfinished:
            self.stdout.write("The database already has publications; nothing seeded.")
            return
        releases = 6
        packages = options["packages"] or (
            packages_for(options["publications"], releases=releases, mean_days=options["mean_days"])
            if options["publications"]
            else 300
        )
        now = timezone.now().replace(minute=0, second=0, microsecond=0)
        start = (
            done.last_success_at
            if done and done.last_success_at
            else now - timedelta(days=options["days"])
        )
        if start >= now:
            self.stdout.write("The demo is up to date; nothing to replay.")
            return
        claimed = demo_seeding.replay_claim(now=timezone.now())
        if claimed is None:
            self.stdout.write("Another seed_demo is replaying the demo; nothing seeded.")
            return
        self._held = claimed
        try:
            self._seed(options, packages=packages, releases=releases, start=start, now=now)
        finally:
            claimed.release()
            demo_seeding.progress_report(None)

    def _seed(self, options, *, packages: int, releases: int, start, now) -> None:
        self._days = max(1, round((now - start) / timedelta(days=1)))
        done = SourceSync.objects.filter(name=REPLAY).first()
        first_run = done is None
        unfinished = done is not None and done.last_summary.get("finished") is False
        if first_run:
            # Written first, so a replay stopped part-way is known, and goes on in the same
            # world (its calm past) from the last moment it replayed.
            calm_until = start
            SourceSync.objects.create(
                name=REPLAY,
                kind="demo",
                last_attempt_at=now,
                last_summary={"finished": False, "calm_until": start.isoformat()},
            )
        else:
            stored = done.last_summary.get("calm_until") if done else None
            calm_until = datetime.fromisoformat(stored) if stored else None
        simulator = Simulator(
            seed=options["seed"],
            packages=packages,
            mean_days_between_updates=options["mean_days"],
            calm_until=calm_until,
        )
        self.stdout.write(
            f"Simulated archive: seed {options['seed']}, {packages} packages × {releases} releases"
        )

        with (
            override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"),
            notifications_sent_here(),
            write_back_deferred() as pending,
        ):
            scenes = (
                demo_scenes.Scenes.plan(simulator, start=start, now=now)
                if first_run or unfinished
                else None
            )
            self._replay(
                simulator,
                start,
                now,
                step=timedelta(hours=options["step_hours"]),
                # Reports before the replay are there already once a tick was replayed.
                baseline=timedelta(days=options["baseline_days"])
                if done is None or done.last_success_at is None
                else None,
                scenes=scenes,
            )
            percentages_mark_applied(event_ids=pending, detail="recorded by the simulator")
        SourceSync.objects.update_or_create(
            name=REPLAY,
            defaults={
                "kind": "demo",
                "last_attempt_at": now,
                "last_success_at": now,
                "last_summary": {"finished": True, "calm_until": calm_until.isoformat()}
                if calm_until
                else {"finished": True},
            },
        )
        active = Publication.objects.filter(
            state__in=(PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED)
        ).count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Seeded: {Publication.objects.count()} publications, {active} in phasing."
            )
        )

    def _replay(
        self,
        simulator: Simulator,
        start,
        now,
        *,
        step: timedelta,
        baseline: timedelta | None,
        scenes: demo_scenes.Scenes | None,
    ) -> None:
        feed = SimulatedCrashFeed(simulator)
        crashes = LocalCrashSource(feed=feed)
        steps = int((now - start) / step)
        self._working(demo_seeding.Progress(0, steps, self._days))
        publications_sync(simulator, now=start)
        if baseline is not None:
            with tqdm(
                desc="crash reports before the replay", unit=" reports", file=self.stderr
            ) as bar:

                def reports_read(count: int) -> None:
                    bar.update(count)
                    self._working(None)

                crashes_sync(crashes, since=start - baseline, now=start, progress=reports_read)
        triager = get_user_model().objects.filter(groups__name=TRIAGERS).first()
        admin = (
            get_user_model()
            .objects.filter(Q(groups__name=ARCHIVE_ADMINS) | Q(is_superuser=True))
            .first()
        )
        if scenes is not None and admin is not None:
            scenes.before_replay(admin)
        moment = start
        with tqdm(
            total=steps, desc="replaying the controller", unit=" ticks", file=self.stderr
        ) as bar:
            while moment < now:
                moment = min(moment + step, now)
                publications_sync(simulator, now=moment, since=moment - step - timedelta(hours=1))
                crashes_sync(crashes, since=moment - step, now=moment)
                if scenes is not None and admin is not None:
                    scenes.during_replay(admin, moment)
                decisions = controller.tick(now=moment, crash_source=crashes)
                halts = [d for d in decisions if d.action == "halt"]
                if halts and triager and admin:
                    self._triage_false_alarms(feed, halts, triager, admin, moment)
                bar.update(1)
                SourceSync.objects.filter(name=REPLAY).update(last_success_at=moment)
                self._working(demo_seeding.Progress(bar.n, steps, self._days))
        if scenes is not None and admin is not None:
            scenes.after_replay(admin)

    def _working(self, progress: demo_seeding.Progress | None) -> None:
        """Keep the replay's lease (the live controller waits for it) and say how far it is."""
        self._held.renew()
        if progress is not None:
            demo_seeding.progress_report(progress)

    def _triage_false_alarms(self, feed, halts, triager, admin, moment) -> None:
        """A triager finds the halt was not caused by the update, overrides it; phasing resumes.

        The simulator knows the truth: a false alarm's bucket, or a rise in crashes of an
        update that carries no regression (crash counts are noisy when they are small).
        """
        publications = Publication.objects.filter(
            pk__in=[d.publication_id for d in halts]
        ).select_related("release", "source_package")
        simulator = feed.world
        releases = {r.codename: r for r in simulator.releases()}
        for publication in publications:
            uploads = simulator.timeline(
                releases[publication.release.codename],
                publication.source_package.name,
                until=moment,
            )
            upload = next((u for u in uploads if u.version == publication.version), None)
            truth = upload.regression.kind if upload and upload.regression else None
            if upload is None or truth in ("new_bucket", "increased_rate", "install_failure"):
                continue
            innocent = {feed.regression_bucket(upload)[0]} if truth == "false_alarm" else set()
            problems = list(publication.problems.filter(active=True).select_related("bucket"))
            if any(p.bucket is not None and p.bucket.signature not in innocent for p in problems):
                continue
            # Within the replayed hour, and never in the future of the real clock.
            later = min(moment + timedelta(minutes=40), timezone.now() - timedelta(minutes=5))
            for problem in problems:
                override_create(
                    source_package=publication.source_package,
                    version=publication.version,
                    kind=problem.kind,
                    bucket=problem.bucket,
                    actor=triager,
                    reason=(
                        "Same crash is reported against the previous version; not caused by this update."
                        if problem.kind == ProblemKind.NEW_BUCKET
                        else "Rise is within the noise of a package that rarely crashes."
                    ),
                    now=later,
                )
            publication_resume(
                publication=publication,
                actor=admin,
                reason="Problems overridden by a triager; resuming phasing.",
                now=later + timedelta(minutes=5),
            )

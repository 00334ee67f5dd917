"""factory_boy factories for the domain models, shared by every test module."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import factory
from django.contrib.auth import get_user_model

from overview.models import (
    Assessment,
    CrashReport,
    ErrorBucket,
    Override,
    Problem,
    ProblemKind,
    Verdict,
)
from packages.models import (
    EventKind,
    Person,
    PhasingEvent,
    PhasingState,
    Policy,
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    SourcePackage,
    SourceSync,
)

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.org")
    password = factory.django.Password("correct horse battery staple")


class ReleaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Release
        django_get_or_create = ("codename",)

    codename = "noble"
    version = "24.04"


class PersonFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Person
        django_get_or_create = ("account_name",)

    account_name = factory.Sequence(lambda n: f"person{n}")
    name = factory.LazyAttribute(lambda o: o.account_name.title())
    email = factory.LazyAttribute(lambda o: f"{o.account_name}@ubuntu.example")


class SourcePackageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SourcePackage
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"package{n}")


class PublicationFactory(factory.django.DjangoModelFactory):
    """An update in phasing at 10%, published at NOW."""

    class Meta:
        model = Publication

    source_package = factory.SubFactory(SourcePackageFactory)
    release = factory.SubFactory(ReleaseFactory)
    version = factory.Sequence(lambda n: f"1.0-1ubuntu0.{n + 1}")
    previous_version = "1.0-1ubuntu0"
    signer = factory.SubFactory(PersonFactory)
    uploader = factory.SubFactory(PersonFactory)
    date_published = NOW
    phased_update_percentage = 10
    state = PhasingState.PHASING
    last_increase_at = factory.LazyAttribute(lambda o: o.date_published)


class PolicyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Policy

    interval = timedelta(hours=6)


class ErrorBucketFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ErrorBucket

    signature = factory.Sequence(lambda n: f"/usr/bin/tool:11:crash_here:{n}")
    function = "crash_here"
    first_seen = NOW
    last_seen = NOW


class CrashReportFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CrashReport
        skip_postgeneration_save = True

    bucket = factory.SubFactory(ErrorBucketFactory)
    source_package = factory.SubFactory(SourcePackageFactory)
    version = "1.0-1ubuntu0.1"
    release = factory.SubFactory(ReleaseFactory)
    architecture = "amd64"
    reported_at = NOW
    system_id = factory.Sequence(lambda n: f"{n:064x}")
    stack_trace = "#0  0x0000 in crash_here () from /usr/lib/libtool.so"
    external_id = factory.Sequence(lambda n: f"report-{n}")

    @factory.post_generation
    def counted(obj, create, extracted, **kwargs):
        """Counted as the ingest counts it: the pages read the bucket counters."""
        if not create or obj.automated_testing or obj.from_proposed:
            return
        from overview.models import BucketSystem, BucketVersionStat

        key = {
            "release_id": obj.release_id,
            "source_package_id": obj.source_package_id,
            "version": obj.version,
            "bucket_id": obj.bucket_id,
        }
        _, new_system = BucketSystem.objects.get_or_create(**key, system_id=obj.system_id)
        stat, _ = BucketVersionStat.objects.get_or_create(**key)
        stat.reports += 1
        stat.systems += int(new_system)
        stat.first_reported = min(filter(None, (stat.first_reported, obj.reported_at)))
        stat.last_reported = max(filter(None, (stat.last_reported, obj.reported_at)))
        stat.save()


class ProblemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Problem

    publication = factory.SubFactory(PublicationFactory)
    kind = ProblemKind.NEW_BUCKET
    bucket = factory.SubFactory(ErrorBucketFactory)
    report_count = 5
    system_count = 4
    detected_at = NOW
    last_seen_at = NOW


class AssessmentFactory(factory.django.DjangoModelFactory):
    """A healthy verdict of the sequential judge, with measured uptake."""

    class Meta:
        model = Assessment

    publication = factory.SubFactory(PublicationFactory)
    judge = "sequential"
    verdict = Verdict.HEALTHY
    evidence = "crash rate 0.9× (0.6–1.3×) the previous version's over 240 crash events: healthy"
    ratio = 0.9
    ratio_low = 0.6
    ratio_high = 1.3
    crashes_new = 40
    crashes_old = 200
    share = 0.21
    share_low = 0.15
    share_high = 0.26
    uptake_hours = 8.0
    sightings = 120
    exposure_hours = 3.5
    assessed_at = NOW


class OverrideFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Override

    source_package = factory.SubFactory(SourcePackageFactory)
    bucket = factory.SubFactory(ErrorBucketFactory)
    kind = ProblemKind.NEW_BUCKET
    reason = "Crash predates this update"
    created_at = NOW


class PhasingEventFactory(factory.django.DjangoModelFactory):
    """An advance of the controller from 10% to 20%."""

    class Meta:
        model = PhasingEvent

    publication = factory.SubFactory(PublicationFactory)
    created_at = NOW
    kind = EventKind.ADVANCED
    old_percentage = 10
    new_percentage = 20
    old_state = PhasingState.PHASING
    new_state = PhasingState.PHASING
    actor_name = "controller"
    reason = "no problems: 10% → 20%"


class ScheduledChangeFactory(factory.django.DjangoModelFactory):
    """An archive admin's pause of an update, scheduled at NOW for an hour later."""

    class Meta:
        model = ScheduledChange

    action = ScheduledAction.PAUSE
    publication = factory.SubFactory(PublicationFactory)
    run_at = NOW + timedelta(hours=1)
    reason = "hold over the weekend"
    created_by = factory.SubFactory(UserFactory, username="scheduler")
    created_at = NOW


class SourceSyncFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SourceSync
        django_get_or_create = ("name",)

    name = "simulator:publications"
    kind = "publications"
    last_attempt_at = NOW
    last_success_at = NOW


def phasing_archive(count: int) -> list[Publication]:
    """`count` updates across two releases in every active state, with problems, an
    override, pause and halt events and verdicts (some not yet judged): the rows whose
    cells cost queries on the pages."""
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    admin = UserFactory(username="ada")
    publications = []
    for n in range(count):
        state = (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED)[n % 3]
        publication = PublicationFactory(
            release=noble if n % 2 else jammy,
            source_package=SourcePackageFactory(name=f"archive-package-{n:03d}"),
            state=state,
            phased_update_percentage=0 if state == PhasingState.HALTED else 10 * (n % 9 + 1),
        )
        if state == PhasingState.PAUSED:
            PhasingEventFactory(
                publication=publication,
                kind=EventKind.PAUSED,
                new_state=PhasingState.PAUSED,
                actor=admin,
                actor_name="ada",
                reason="waiting on a bug",
            )
        if state == PhasingState.HALTED:
            problem = ProblemFactory(publication=publication)
            ProblemFactory(publication=publication)
            OverrideFactory(source_package=publication.source_package, bucket=problem.bucket)
            PhasingEventFactory(
                publication=publication,
                kind=EventKind.HALTED,
                new_percentage=0,
                new_state=PhasingState.HALTED,
                reason="new problem",
            )
            AssessmentFactory(
                publication=publication,
                verdict=Verdict.REGRESSED,
                evidence="new bucket crash_here (4 systems, 5 reports)",
                averted=120.0,
            )
        elif n % 2:
            AssessmentFactory(publication=publication)
        PhasingEventFactory(publication=publication)
        publications.append(publication)
    return publications

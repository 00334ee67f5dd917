"""The overview page: every update in phasing, grouped by release, filtered and sorted."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest

from overview.models import ProblemKind, Verdict
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from tests.factories import (
    NOW,
    AssessmentFactory,
    CrashReportFactory,
    OverrideFactory,
    PhasingEventFactory,
    PolicyFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    SourceSyncFactory,
    UserFactory,
    phasing_archive,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]


def _rows(response) -> list[str]:
    return [row.record.source_package.name for row in response.context["table"].paginated_rows]


def test_it_lists_updates_in_phasing_grouped_by_release_newest_first(anonymous):
    PublicationFactory(
        release=ReleaseFactory(codename="jammy", version="22.04"),
        source_package=SourcePackageFactory(name="bash"),
    )
    PublicationFactory(
        release=ReleaseFactory(codename="noble", version="24.04"),
        source_package=SourcePackageFactory(name="zsh"),
    )
    PublicationFactory(
        source_package=SourcePackageFactory(name="done"), state=PhasingState.COMPLETE
    )

    response = anonymous.get("/")

    assert response.status_code == 200
    assert _rows(response) == ["zsh", "bash"]
    html = response.content.decode()
    assert html.index(">noble <") < html.index(">jammy <")
    zsh = response.context["table"].lines[0]
    assert f'href="/updates/{zsh.pk}/">zsh</a>' in html


def test_it_says_the_summary_per_release_in_words(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    for percentage in (90, 90, 90, 80, 80, 0):
        PublicationFactory(release=noble, phased_update_percentage=percentage)

    response = anonymous.get("/")

    assert "3 at 90%, 2 at 80%, 1 at 0%" in response.content.decode()
    assert "6 updates in phasing" in response.content.decode()


def test_the_summary_counts_halted_and_paused_updates_and_shows_a_freeze_and_why(anonymous):
    from packages.services import release_freeze

    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    for percentage, state in ((0, PhasingState.HALTED), (0, PhasingState.PHASING)):
        PublicationFactory(release=noble, phased_update_percentage=percentage, state=state)
    PublicationFactory(release=noble, phased_update_percentage=40, state=PhasingState.PAUSED)
    PublicationFactory(release=jammy, phased_update_percentage=40)
    release_freeze(release=jammy, actor=UserFactory(username="ana"), reason="point release 22.04.6")

    html = anonymous.get("/").content.decode()

    noble_card = html[html.index('<article class="summary">') : html.index("</article>")]
    assert "3 updates in phasing: 1 halted, 1 paused" in noble_card
    assert "1 at 40%, 2 at 0%" in noble_card
    assert "frozen" not in noble_card
    jammy_card = html[html.index(">jammy</a>") :]
    jammy_card = jammy_card[: jammy_card.index("</article>")]
    assert "1 update in phasing</p>" in jammy_card
    assert "frozen</span>" in jammy_card and "point release 22.04.6" in jammy_card


def test_the_times_in_the_table_say_their_zone(anonymous):
    publication = PublicationFactory()
    ScheduledChangeFactory(publication=publication, run_at=NOW + timedelta(days=1))

    html = anonymous.get("/").content.decode()

    shown = (NOW + timedelta(days=1)).strftime("%H:%M")
    assert f"pause, 4 Dec {shown} UTC</time>" in html


def test_it_says_when_the_next_step_and_100_percent_come(anonymous):
    # Default policy: +10 every 6 hours. Last increase 3 h 50 min ago at 50%.
    PublicationFactory(
        phased_update_percentage=50, last_increase_at=NOW - timedelta(hours=3, minutes=50)
    )

    html = anonymous.get("/").content.decode()

    assert "→ 60 % in 2 h 10 min" in html
    # 60% at +2h10, then four more steps 6 h apart: 100% in 26 h 10 min.
    assert "100 % in about 26 h" in html


def test_it_follows_the_policy_of_the_package(anonymous):
    package = SourcePackageFactory(name="firefox")
    PolicyFactory(
        source_package=package, schedule=[1, 2, 5, 10, 20, 50, 100], interval=timedelta(hours=1)
    )
    PublicationFactory(source_package=package, phased_update_percentage=10, last_increase_at=NOW)

    assert "→ 20 % in 1 h" in anonymous.get("/").content.decode()


def test_it_says_who_paused_an_update(anonymous):
    publication = PublicationFactory(state=PhasingState.PAUSED, hold_reason=HoldReason.PAUSED)
    PhasingEventFactory(
        publication=publication,
        kind="paused",
        new_state="paused",
        actor=UserFactory(username="ada"),
        actor_name="ada",
    )

    html = anonymous.get("/").content.decode()

    assert (
        'title="paused by ada"><span class="badge-icon" aria-hidden="true">❚❚</span> paused' in html
    )
    assert ">waits for a person</span>" in html


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        (
            {
                "hold_reason": HoldReason.CRASH_DATA_UNAVAILABLE,
                "crash_data_unavailable_since": NOW - timedelta(hours=2),
            },
            'title="crash data unavailable since 2026-12-03 10:00 UTC">waits for crash data<',
        ),
        ({"hold_reason": HoldReason.NOT_ENOUGH_DATA}, ">waits for more crash data<"),
    ],
)
def test_it_says_why_the_controller_holds_an_update(anonymous, fields, words):
    PublicationFactory(**fields)

    html = anonymous.get("/").content.decode()

    assert words in html
    assert "</span> held for data</span>" in html


def test_it_says_an_update_of_a_frozen_release_is_held(anonymous):
    PublicationFactory(release=ReleaseFactory(codename="noble", frozen=True))

    html = anonymous.get("/").content.decode()

    assert 'title="the release is frozen">waits for unfreeze</span>' in html
    assert '<span class="badge-icon" aria-hidden="true">❄</span> frozen</span>' in html


def test_a_halted_update_counts_its_problems_names_them_in_its_verdict_and_says_what_it_was_at(
    anonymous,
):
    publication = PublicationFactory(
        state=PhasingState.HALTED, phased_update_percentage=0, percentage_before_halt=40
    )
    ProblemFactory(publication=publication, bucket__function="png_read_row")
    ProblemFactory(publication=publication, kind=ProblemKind.INCREASED_RATE, bucket=None)

    html = anonymous.get("/").content.decode()

    assert 'title="png_read_row, increased crash rate">regressed</span>' in html
    assert f'<a href="/updates/{publication.pk}/#problems">2</a>' in html
    assert "0 % (was 40 %)" in html
    assert '<span class="badge-icon" aria-hidden="true">■</span> halted</span>' in html


def test_an_overridden_problem_is_shown_as_overridden_and_does_not_explain_the_halt(anonymous):
    publication = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)
    overridden = ProblemFactory(publication=publication, bucket__function="old_crash")
    ProblemFactory(publication=publication, bucket__function="new_crash")
    OverrideFactory(source_package=publication.source_package, bucket=overridden.bucket)

    html = anonymous.get("/").content.decode()

    assert 'title="new_crash">regressed</span>' in html
    assert "old_crash" not in html


def test_an_update_whose_only_problem_is_overridden_reads_as_overridden_with_who_and_why(
    anonymous,
):
    publication = PublicationFactory(phased_update_percentage=20)
    problem = ProblemFactory(publication=publication, kind=ProblemKind.INCREASED_RATE, bucket=None)
    OverrideFactory(
        source_package=publication.source_package,
        kind=ProblemKind.INCREASED_RATE,
        bucket=None,
        created_by=UserFactory(username="tess-login", first_name="Tess"),
        reason="the same crash rose in the old version",
    )
    AssessmentFactory(publication=problem.publication, verdict=Verdict.INSUFFICIENT)

    html = anonymous.get("/").content.decode()

    assert ">overridden</span>" in html
    assert "by Tess: the same crash rose in the old version" in html
    assert "tess-login" not in html  # a login name never goes out on a public page
    assert "too little data" not in html


def test_each_update_shows_its_verdict_with_the_figures_and_the_share_running_it(anonymous):
    AssessmentFactory(
        publication=PublicationFactory(
            source_package=SourcePackageFactory(name="bash"), phased_update_percentage=30
        ),
        verdict=Verdict.INSUFFICIENT,
        evidence="insufficient evidence: about 140 more crash events to tell a doubling",
        crashes_needed=140,
        crashes_new=10,
        crashes_old=30,
        share=0.21,
        share_low=0.13,
        share_high=0.29,
        sightings=0,
        measured_hours=30,
    )
    PublicationFactory(source_package=SourcePackageFactory(name="zsh"))

    html = anonymous.get("/").content.decode()

    assert ">too little data yet</span>" in html
    assert "about 140 more crash reports" in html
    # The share really running it, as the range it is known to.
    assert "13–29 % running it" in html
    assert ">not judged yet</span>" in html
    # The evidence sentence is the update page's, not the overview's.
    assert "to tell a doubling" not in html


def test_a_healthy_update_reads_no_rise_seen(anonymous):
    AssessmentFactory(verdict=Verdict.HEALTHY, crashes_new=30, crashes_old=90)

    assert ">no rise seen</span>" in anonymous.get("/").content.decode()


def test_a_halted_update_without_a_rise_says_who_halted_it_and_why(anonymous):
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="mutter"),
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )
    PhasingEventFactory(
        publication=publication,
        kind=EventKind.HALTED,
        new_percentage=0,
        actor_name="ada",
        reason="a bad postinst",
    )
    AssessmentFactory(publication=publication, verdict=Verdict.HEALTHY, crashes_new=30)

    line = anonymous.get("/").content.decode().split('data-label="Verdict"')[1]

    assert ">no rise seen</span>" not in line
    assert ">halted, though no rise seen</span>" in line
    assert "halted by ada: a bad postinst; no rise in the crash rate over" in line


def test_the_verdict_filter_lives_in_the_url_and_in_the_export(anonymous):
    for name, verdict in (("bash", Verdict.HEALTHY), ("zsh", Verdict.INSUFFICIENT)):
        AssessmentFactory(
            publication=PublicationFactory(source_package=SourcePackageFactory(name=name)),
            verdict=verdict,
        )
    PublicationFactory(source_package=SourcePackageFactory(name="unjudged"))

    assert _rows(anonymous.get("/?verdict=insufficient")) == ["zsh"]
    assert _rows(anonymous.get("/?verdict=healthy")) == ["bash"]
    [row] = json.loads(anonymous.get("/?verdict=healthy&_export=json").content)
    assert row["Verdict"].startswith("healthy: crash rate 0.9×")


def test_the_header_estimates_the_crashes_halts_spared(anonymous):
    for n, averted in enumerate((1200.4, 300.0)):
        publication = PublicationFactory(
            source_package=SourcePackageFactory(name=f"halted-{n}"),
            state=PhasingState.HALTED,
            phased_update_percentage=0,
        )
        PhasingEventFactory(publication=publication, kind=EventKind.HALTED, new_percentage=0)
        AssessmentFactory(publication=publication, verdict=Verdict.REGRESSED, averted=averted)
    # A halt of long ago no longer counts.
    old = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)
    PhasingEventFactory(publication=old, kind=EventKind.HALTED, created_at=NOW - timedelta(days=40))
    AssessmentFactory(publication=old, verdict=Verdict.REGRESSED, averted=9999.0)

    html = anonymous.get("/").content.decode()

    assert "Halts in the last 30 days spared about 1,500 crashes (2 updates" in html


def test_without_a_recent_halt_the_header_says_no_update_was_halted(anonymous):
    html = anonymous.get("/").content.decode()

    assert "No update was halted in the last 30 days." in html


def test_recent_halts_without_an_estimate_are_not_read_as_no_halt(anonymous):
    for n in range(2):
        publication = PublicationFactory(
            source_package=SourcePackageFactory(name=f"halted-{n}"),
            state=PhasingState.HALTED,
            phased_update_percentage=0,
        )
        PhasingEventFactory(publication=publication, kind=EventKind.HALTED, new_percentage=0)

    html = anonymous.get("/").content.decode()

    assert "No update was halted" not in html and "No halt" not in html
    assert (
        "2 updates were halted in the last 30 days; "
        "none yet has the crash rates to estimate what its halt spared."
    ) in html


def test_halts_with_and_without_an_estimate_are_both_counted(anonymous):
    for n, averted in enumerate((1000.0, None)):
        publication = PublicationFactory(
            source_package=SourcePackageFactory(name=f"halted-{n}"),
            state=PhasingState.HALTED,
            phased_update_percentage=0,
        )
        PhasingEventFactory(publication=publication, kind=EventKind.HALTED, new_percentage=0)
        AssessmentFactory(publication=publication, verdict=Verdict.REGRESSED, averted=averted)

    html = anonymous.get("/").content.decode()

    assert "spared about 1,000 crashes (1 update, had each gone on to 100% for" in html
    assert "; 1 other halt without an estimate yet)." in html


def test_filters_by_release_state_percentage_and_name_live_in_the_url(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    PublicationFactory(
        release=noble, source_package=SourcePackageFactory(name="bash"), phased_update_percentage=30
    )
    PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="bash-completion"),
        phased_update_percentage=70,
    )
    PublicationFactory(
        release=jammy,
        source_package=SourcePackageFactory(name="bashtop"),
        phased_update_percentage=40,
    )
    PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="zsh"),
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )

    assert _rows(anonymous.get("/?release=noble")) == ["bash", "bash-completion", "zsh"]
    assert _rows(anonymous.get("/?state=halted")) == ["zsh"]
    assert _rows(anonymous.get("/?percentage_min=35&percentage_max=80")) == [
        "bash-completion",
        "bashtop",
    ]
    assert _rows(anonymous.get("/?q=BASH&release=noble")) == ["bash", "bash-completion"]


def test_sorting_by_a_column_orders_the_rows(anonymous):
    for name, percentage in (("a", 30), ("b", 70), ("c", 10)):
        PublicationFactory(
            source_package=SourcePackageFactory(name=name), phased_update_percentage=percentage
        )

    assert _rows(anonymous.get("/?sort=-percentage")) == ["b", "a", "c"]
    assert _rows(anonymous.get("/?sort=percentage")) == ["c", "a", "b"]
    assert _rows(anonymous.get("/?sort=-package")) == ["c", "b", "a"]


@pytest.mark.parametrize(
    "query",
    [
        "?sort=nonsense",
        "?page=abc",
        "?page=99999",
        "?per_page=0",
        "?per_page=abc",
        "?sort=-next&page=-3",
    ],
)
def test_bad_sort_and_page_parameters_are_ignored(anonymous, query):
    PublicationFactory(source_package=SourcePackageFactory(name="bash"))

    response = anonymous.get(f"/{query}")

    assert response.status_code == 200
    assert _rows(response) == ["bash"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "?percentage_min=80&percentage_max=20",
            "The lowest percentage (80) is above the highest (20).",
        ),
        ("?percentage_min=abc", "Enter a number."),
        ("?percentage_max=101", "less than or equal to 100"),
        ("?release=nosuchrelease", "Select a valid choice."),
        ("?state=exploded", "Select a valid choice."),
        ("?verdict=fine", "Select a valid choice."),
    ],
)
def test_bad_filters_answer_400_with_a_message_and_the_rest_of_the_page(anonymous, query, message):
    PublicationFactory(source_package=SourcePackageFactory(name="bash"))

    response = anonymous.get(f"/{query}")

    assert response.status_code == 400
    assert message in response.content.decode()
    assert _rows(response) == ["bash"]


def test_it_paginates_with_a_fixed_page_size(anonymous):
    phasing_archive(30)

    first = anonymous.get("/")
    second = anonymous.get("/?page=2")

    assert len(_rows(first)) == 25
    assert len(_rows(second)) == 5
    assert set(_rows(first)).isdisjoint(_rows(second))
    assert 'rel="next"' in first.content.decode()


def test_export_gives_the_filtered_table_as_csv(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="bash"),
        version="5.2-2ubuntu0.1",
        phased_update_percentage=30,
    )
    PublicationFactory(
        release=ReleaseFactory(codename="jammy", version="22.04"),
        source_package=SourcePackageFactory(name="zsh"),
    )

    response = anonymous.get("/?release=noble&_export=csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["Source package"], r["Version"], r["Phased"], r["State"]) for r in rows] == [
        ("bash", "5.2-2ubuntu0.1", "30", "phasing")
    ]
    assert rows[0]["What happens next"].startswith("→ 40% in 6 h")


def test_export_as_json_carries_problems_and_no_crash_report_content(anonymous):
    publication = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)
    problem = ProblemFactory(publication=publication, bucket__function="png_read_row")
    CrashReportFactory(bucket=problem.bucket, stack_trace="SECRET-STACK-FRAME", system_id="f" * 64)

    response = anonymous.get("/?_export=json")

    data = json.loads(response.content)
    assert data[0]["Problems"] == "png_read_row"
    assert "SECRET-STACK-FRAME" not in response.content.decode()
    assert "f" * 64 not in response.content.decode()


def test_recently_completed_updates_are_in_a_collapsed_section(anonymous):
    PublicationFactory(
        source_package=SourcePackageFactory(name="recent"),
        state=PhasingState.COMPLETE,
        completed_at=NOW - timedelta(days=2),
    )
    PublicationFactory(
        source_package=SourcePackageFactory(name="ancient"),
        state=PhasingState.COMPLETE,
        completed_at=NOW - timedelta(days=30),
    )

    response = anonymous.get("/")

    html = response.content.decode()
    assert '<details class="completed">' in html
    assert "1 update reached 100% in the last 7 days" in html
    assert "recent" in html and "ancient" not in html


def test_the_footer_says_where_the_data_came_from_and_when(anonymous):
    SourceSyncFactory(
        name="launchpad", kind="publications", last_success_at=NOW - timedelta(minutes=5)
    )

    html = anonymous.get("/").content.decode()

    assert "launchpad (publications), synced 2026-12-03 11:55 UTC" in html


@pytest.mark.parametrize("size", [3, 40])
def test_the_page_costs_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    for publication in phasing_archive(size):
        ScheduledChangeFactory(publication=publication)
    SourceSyncFactory()
    # 1 policies, 2 the updates in phasing as the dependency rule reads them (dependent
    # groups; in a transaction, as here, they are computed, outside one they are kept per
    # data version and this is the version's read), 3 summary aggregate (which also counts
    # the rows for the paginator), 4 page of publications with their assessments, 5 their
    # active problems with covering overrides (who and why), 6 their pause and halt
    # events, 7 pending scheduled changes with their targets and people, 8 the updates
    # that need a person with their last halt, 9 how many of each kind, 10 releases of the
    # filter form, 11 recently completed, 12 crashes halts spared, 13 source syncs in the
    # footer.
    with django_assert_num_queries(13):
        response = anonymous.get("/")
    assert response.status_code == 200


@pytest.mark.parametrize("size", [3, 40])
def test_the_filtered_page_and_its_export_cost_a_fixed_number_of_queries(
    anonymous, django_assert_num_queries, size
):
    phasing_archive(size)
    # A filter that matches: the 13 above and 14, the release looked up to validate it.
    with django_assert_num_queries(14):
        assert anonymous.get("/?release=noble").status_code == 200
    # A filter that matches nothing: no problems nor events for an empty page of rows.
    with django_assert_num_queries(11):
        assert anonymous.get("/?release=noble&q=no-such-package").status_code == 200
    # The export: release lookup, policies, every row, problems with overrides, events
    # (no dependent groups: the export does not show them).
    with django_assert_num_queries(5):
        assert anonymous.get("/?release=noble&_export=csv").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/source/%00/",
        "/feeds/changes/?release=%00",
        "/api/v1/machine/?machine_id=0&release=%00",
        "/?q=%00",
    ],
)
def test_a_nul_byte_anywhere_in_a_request_is_a_400_not_a_500(anonymous, url):
    assert anonymous.get(url).status_code == 400


def test_each_line_links_to_its_update_page_and_leaves_evidence_and_links_out_to_it(anonymous):
    publication = PublicationFactory(
        source_package__name="hello",
        version="2.10-3ubuntu0.1",
        previous_version="2.10-3",
        closed_bugs=[2066054],
    )
    ProblemFactory(publication=publication, bucket__signature="/usr/bin/hello:11:main")
    AssessmentFactory(publication=publication)

    html = anonymous.get("/").content.decode()

    line = html[html.index('<tr class="line') :]
    line = line[: line.index("</tr>")]
    assert f'<a href="/updates/{publication.pk}/">hello</a>' in line
    assert '<span class="version">2.10-3ubuntu0.1</span>' in line
    assert "crash events" not in line and "bugs.launchpad.net" not in line

"""ErrorTrackerSource against a local server that answers as errors.ubuntu.com's API does.

Where the shapes come from (ubuntu/error-tracker):
- src/errors/api/urls.py: tastypie ``Api(api_name="1.0")``, so ``/api/1.0/<resource>/``.
- src/errors/api/resources.py: ``PackageVersionNewBuckets`` (resource
  ``package-version-new-buckets``, fields ``function`` and ``web_link``; a version Launchpad
  does not know raises NotFound, a 404 with ``{"error_message": ...}``) and
  ``RateOfCrashesResource`` (``package-rate-of-crashes``, fields ``increase`` (bool),
  ``difference``, ``web_link``, ``previous_period_in_days``, ``previous_average`` (ints),
  all nullable, one object per answer). ``ErrorsMeta.limit`` is 7, ``max_limit`` 360.
- tastypie's list envelope: ``{"meta": {"limit", "next", "offset", "previous",
  "total_count"}, "objects": [...]}``, ``meta.next`` a path with ``offset``.
- src/errors/cassie.py: ``function`` is the bucket id; ``web_link`` is ``<root>problem/
  <sha1>`` or ``<root>bucket/?id=<quoted id>``; the rate's ``web_link`` is ``<root>?release=
  &package=&version=``; ``date`` is compared with ``%Y%m%d`` counter columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha1
from urllib.parse import quote

import pytest

from overview.evidence.sources.base import CrashAnswer, CrashQuery, CrashSource, ProblemRecord
from overview.evidence.sources.errortracker import ErrorTrackerSource, release_names_from_versions
from tests.fake_http import FakeHTTPServer, Reply

NOW = datetime(2025, 6, 3, 14, 30, tzinfo=UTC)
NEW_BUCKETS = "/api/1.0/package-version-new-buckets/"
RATE = "/api/1.0/package-rate-of-crashes/"
QUERY = CrashQuery(
    release="noble",
    source_package="hello",
    version="2.10-3ubuntu0.1",
    previous_version="2.10-3",
    percentage=30,
)
OTHER = CrashQuery(
    release="noble",
    source_package="other",
    version="1.1ubuntu0.1",
    previous_version="1.1",
    percentage=10,
)
SIGNATURE = "/usr/bin/hello:11:greet:main:__libc_start_main"
PYTHON_SIGNATURE = "/usr/bin/hello-py:ValueError:greet.py@12:main"


def tastypie_list(objects, *, next_path=None, limit=7, offset=0, total=None):
    return {
        "meta": {
            "limit": limit,
            "next": next_path,
            "offset": offset,
            "previous": None,
            "total_count": len(objects) if total is None else total,
        },
        "objects": objects,
    }


def new_bucket(root, bucket_id, *, has_problem_page=True):
    if has_problem_page:
        href = f"{root}/problem/{sha1(bucket_id.encode()).hexdigest()}"
    else:
        href = f"{root}/bucket/?id={quote(bucket_id)}"
    return {"function": bucket_id, "web_link": href}


def no_increase():
    return tastypie_list(
        [
            {
                "increase": False,
                "difference": None,
                "web_link": None,
                "previous_period_in_days": None,
                "previous_average": None,
            }
        ],
        limit=7,
    )


def an_increase(root, *, difference=5):
    web_link = f"{root}/?release=Ubuntu%2024.04&package=hello&version=2.10-3ubuntu0.1"
    return tastypie_list(
        [
            {
                "increase": True,
                "difference": difference,
                "web_link": web_link,
                "previous_period_in_days": 14,
                "previous_average": 3,
            }
        ]
    )


def make_source(server: FakeHTTPServer, sleeps, **kwargs) -> ErrorTrackerSource:
    kwargs.setdefault("timeout", 0.2)
    return ErrorTrackerSource(api_root=server.url("/api/1.0/"), sleep=sleeps, **kwargs)


def serve_quiet(server: FakeHTTPServer) -> None:
    server.get(NEW_BUCKETS, Reply(json=tastypie_list([])))
    server.get(RATE, Reply(json=no_increase()))


def test_it_is_a_crash_source(http_server, sleeps):
    assert isinstance(make_source(http_server, sleeps), CrashSource)


def test_it_reports_new_buckets_by_their_bucket_id_and_page(http_server, sleeps):
    root = http_server.base_url
    http_server.get(
        NEW_BUCKETS,
        Reply(
            json=tastypie_list(
                [
                    new_bucket(root, SIGNATURE),
                    new_bucket(root, PYTHON_SIGNATURE, has_problem_page=False),
                ]
            )
        ),
    )
    http_server.get(RATE, Reply(json=no_increase()))

    answers = make_source(http_server, sleeps).problems([QUERY], now=NOW)

    assert answers == {
        QUERY: CrashAnswer(
            problems=(
                ProblemRecord(
                    kind="new_bucket",
                    signature=SIGNATURE,
                    function=SIGNATURE,
                    web_link=f"{root}/problem/{sha1(SIGNATURE.encode()).hexdigest()}",
                ),
                ProblemRecord(
                    kind="new_bucket",
                    signature=PYTHON_SIGNATURE,
                    function=PYTHON_SIGNATURE,
                    web_link=f"{root}/bucket/?id={quote(PYTHON_SIGNATURE)}",
                ),
            )
        )
    }
    (request,) = http_server.made("GET", NEW_BUCKETS)
    assert request.param("format") == "json"
    assert request.param("package") == "hello"
    assert request.param("previous_version") == "2.10-3"
    assert request.param("new_version") == "2.10-3ubuntu0.1"
    # tastypie pages by 7 unless asked; 0 asks for the tracker's maximum.
    assert request.param("limit") == "0"


def test_it_follows_meta_next_through_every_page_of_buckets(http_server, sleeps):
    root = http_server.base_url
    http_server.get(
        NEW_BUCKETS,
        Reply(
            json=tastypie_list(
                [new_bucket(root, "sig-one")],
                next_path="/api/1.0/package-version-new-buckets/?format=json&limit=1&offset=1"
                "&package=hello&previous_version=2.10-3&new_version=2.10-3ubuntu0.1",
                limit=1,
                total=2,
            )
        ),
    )
    http_server.get(
        NEW_BUCKETS,
        Reply(json=tastypie_list([new_bucket(root, "sig-two")], limit=1, offset=1, total=2)),
        query={"offset": "1"},
    )
    http_server.get(RATE, Reply(json=no_increase()))

    answer = make_source(http_server, sleeps).problems([QUERY], now=NOW)[QUERY]

    assert [p.signature for p in answer.problems] == ["sig-one", "sig-two"]


def test_it_reports_an_increased_crash_rate_with_its_difference(http_server, sleeps):
    root = http_server.base_url
    http_server.get(NEW_BUCKETS, Reply(json=tastypie_list([])))
    http_server.get(RATE, Reply(json=an_increase(root, difference=5)))

    answer = make_source(http_server, sleeps).problems([QUERY], now=NOW)[QUERY]

    assert answer == CrashAnswer(
        problems=(
            ProblemRecord(
                kind="increased_rate",
                web_link=f"{root}/?release=Ubuntu%2024.04&package=hello&version=2.10-3ubuntu0.1",
                difference=5.0,
            ),
        )
    )
    (request,) = http_server.made("GET", RATE)
    assert request.param("format") == "json"
    assert request.param("package") == "hello"
    assert request.param("old_version") == "2.10-3"
    assert request.param("new_version") == "2.10-3ubuntu0.1"
    assert request.param("phased_update_percentage") == "30"
    assert request.param("release") == "Ubuntu 24.04"
    assert request.param("date") == "20250603"
    assert request.param("exclude_proposed") == "True"


def test_no_new_bucket_and_no_increase_is_an_answer_without_problems(http_server, sleeps):
    serve_quiet(http_server)

    answer = make_source(http_server, sleeps).problems([QUERY], now=NOW)[QUERY]

    assert answer == CrashAnswer(problems=(), error="")


def test_including_proposed_reports_leaves_the_parameter_out(http_server, sleeps):
    # The tracker tests the parameter's string for truth: "False" would still exclude.
    serve_quiet(http_server)

    make_source(http_server, sleeps, exclude_proposed=False).problems([QUERY], now=NOW)

    (request,) = http_server.made("GET", RATE)
    assert "exclude_proposed" not in request.query


def test_release_names_given_to_the_constructor_name_the_release(http_server, sleeps):
    serve_quiet(http_server)
    devel = CrashQuery("zesty2", "hello", "2.0ubuntu0.1", "2.0", 10)
    source = make_source(
        http_server, sleeps, release_names=release_names_from_versions({"zesty2": "26.10"})
    )

    answer = source.problems([devel], now=NOW)[devel]

    assert answer.error == ""
    assert http_server.made("GET", RATE)[0].param("release") == "Ubuntu 26.10"


def test_a_release_the_tracker_cannot_be_asked_about_is_unavailable_not_guessed(
    http_server, sleeps
):
    serve_quiet(http_server)
    unknown = CrashQuery("warty", "hello", "2.0ubuntu0.1", "2.0", 10)

    answer = make_source(http_server, sleeps).problems([unknown], now=NOW)[unknown]

    assert answer.error.startswith("crash data unavailable:")
    assert "warty" in answer.error
    assert http_server.made("GET", RATE) == []


def test_a_first_version_has_nothing_to_compare_and_asks_nothing(http_server, sleeps):
    first = CrashQuery("noble", "hello", "2.10-3ubuntu0.1", "", 10)

    answer = make_source(http_server, sleeps).problems([first], now=NOW)[first]

    assert answer == CrashAnswer()
    assert http_server.requests == []


def test_the_baseline_date_is_the_publication_day_when_the_query_knows_it(http_server, sleeps):
    @dataclass(frozen=True)
    class DatedQuery(CrashQuery):
        date_published: datetime | None = None

    serve_quiet(http_server)
    dated = DatedQuery(
        "noble", "hello", "2.10-3ubuntu0.1", "2.10-3", 30, datetime(2025, 5, 30, 23, 0, tzinfo=UTC)
    )

    make_source(http_server, sleeps).problems([dated], now=NOW)

    assert http_server.made("GET", RATE)[0].param("date") == "20250530"


def test_a_server_error_is_retried_before_the_answer_counts(http_server, sleeps):
    http_server.get(
        NEW_BUCKETS, Reply(status=503, body="Service Unavailable"), Reply(json=tastypie_list([]))
    )
    http_server.get(RATE, Reply(json=no_increase()))

    answer = make_source(http_server, sleeps).problems([QUERY], now=NOW)[QUERY]

    assert answer.error == ""
    assert sleeps.calls == [0.5]


def unavailable_cases():
    root = "http://127.0.0.1"
    return {
        "the tracker is too slow": (Reply(json=tastypie_list([]), delay=0.6), None),
        "the tracker keeps failing": (Reply(status=500, body="Internal Server Error"), None),
        "a body that is not json": (Reply(body="<html>Bad Gateway</html>"), None),
        "a list instead of the envelope": (Reply(json=[new_bucket(root, SIGNATURE)]), None),
        "an envelope without objects": (Reply(json={"meta": {}}), None),
        "an error message with status 200": (Reply(json={"error_message": "Sorry"}), None),
        "a bucket without a web link": (Reply(json=tastypie_list([{"function": 3}])), None),
        "an object that is not an object": (Reply(json=tastypie_list(["sig"])), None),
        "a rate without increase": (None, Reply(json=tastypie_list([{"difference": 4}]))),
        "a rate whose increase is not a boolean": (
            None,
            Reply(json=tastypie_list([{"increase": "yes"}])),
        ),
        "a rate with a difference that is not a number": (
            None,
            Reply(json=tastypie_list([{"increase": True, "difference": "lots", "web_link": ""}])),
        ),
        "no rate object at all": (None, Reply(json=tastypie_list([]))),
    }


@pytest.mark.parametrize("case", sorted(unavailable_cases()))
def test_a_failed_or_malformed_answer_is_crash_data_unavailable_for_that_query_only(
    http_server, sleeps, case
):
    new_buckets_reply, rate_reply = unavailable_cases()[case]
    serve_quiet(http_server)
    bad = {"package": "hello"}
    if new_buckets_reply is not None:
        http_server.get(NEW_BUCKETS, new_buckets_reply, query=bad)
    if rate_reply is not None:
        http_server.get(RATE, rate_reply, query=bad)

    answers = make_source(http_server, sleeps, max_retries=1).problems([QUERY, OTHER], now=NOW)

    assert answers[QUERY].error.startswith("crash data unavailable: ")
    assert answers[QUERY].problems == ()
    assert answers[OTHER] == CrashAnswer()


def test_a_tracker_nobody_answers_at_is_crash_data_unavailable(sleeps):
    with FakeHTTPServer() as server:
        api_root = server.url("/api/1.0/")
    source = ErrorTrackerSource(api_root=api_root, timeout=0.2, max_retries=1, sleep=sleeps)

    answer = source.problems([QUERY], now=NOW)[QUERY]

    assert answer.error.startswith("crash data unavailable: ")
    assert "connection failed" in answer.error
    assert sleeps.calls == [0.5]


def test_the_public_tracker_gives_no_restricted_reports(http_server, sleeps):
    assert list(make_source(http_server, sleeps).reports(since=None, now=NOW)) == []
    assert http_server.requests == []

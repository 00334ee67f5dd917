"""The API's declared schema and its answers agree: schemathesis against the live API.

A fixed number of examples per endpoint and mode (data that fits the schema, and data
that does not), derandomized, so a run is the same each time; every check schemathesis
has runs on every answer: no 5xx, the declared status codes, content types and bodies,
good input accepted and bad input refused.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from tests.factories import (
    ErrorBucketFactory,
    ProblemFactory,
    PublicationFactory,
    ScheduledChangeFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 30


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_answers_as_its_schema_declares(live_server, mode):
    publication = PublicationFactory()
    ProblemFactory(publication=publication, bucket=ErrorBucketFactory())
    ScheduledChangeFactory(publication=publication)
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/v1/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 9  # the index at /api/v1/, the fleet reports and seven endpoints

    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not list(operation.iter_parameters()):
            continue  # the index takes nothing, so nothing can be sent wrong

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_as_declared(case) -> None:
            case.call_and_validate()

        answers_as_declared()

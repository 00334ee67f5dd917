"""The read-only JSON API, /api/v1/, with its OpenAPI schema and browsable docs.

Public data only: publications, their events, problem buckets as aggregates, and the
machine check. Lists are paginated with `next` and `previous` links and cost a fixed
number of queries whatever their length. Bad query parameters answer 400 with a message.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import ValidationError
from ninja.openapi.docs import Swagger

from overview.api.fleet import router as fleet_router
from overview.api.routes import router

api = NinjaAPI(
    title="Phasing API",
    version="1",
    description=(
        "Read-only JSON about phased updates: publications in phasing with their "
        "percentages, policies, next steps and problems; phasing events; problem buckets "
        "(public aggregates only); and what apt decides for one machine or a fleet."
    ),
    urls_namespace="api",
    # Swagger UI from django-ninja's own static files ("ninja" is an installed app), no CDN.
    docs=Swagger({"persistAuthorization": False}),
    docs_url="/docs",
)


@api.exception_handler(ValidationError)
def _bad_parameters(request: HttpRequest, error: ValidationError) -> HttpResponse:
    messages = []
    for item in error.errors:
        where = ".".join(str(part) for part in item.get("loc", ()) if part != "query")
        messages.append(f"{where}: {item.get('msg', 'invalid')}")
    return api.create_response(
        request, {"detail": "; ".join(messages) or "invalid parameters"}, status=400
    )

api.add_router("", router)
api.add_router("", fleet_router)

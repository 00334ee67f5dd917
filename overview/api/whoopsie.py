"""POST /<system id>: the crash database whoopsie talks to (``CRASH_DB_URL``).

Thin: the body is read within the size limit and the system's hourly limit, parsed by
overview.evidence.intake, kept by overview.evidence.intake_store; the answers are daisy's
plain text ones. whoopsie resends a report on any answer but 200 and 400, so a report it
should not resend (unreadable, refused) is a 400, and one it may send later (over the
hourly limit) a 429.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from overview.evidence import intake
from overview.evidence.intake_store import Replayed, crash_receive, intake_rate_limited


def _answer(status: int, text: str) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")


@csrf_exempt
@require_POST
def submit(request: HttpRequest, system_id: str) -> HttpResponse:
    if not intake.valid_system_id(system_id):
        return _answer(400, "The system id is not a SHA-512 in hexadecimal.")
    limit = settings.PHASING_INTAKE_MAX_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return _answer(400, "Invalid Content-Length.")
    if declared > limit:
        return _answer(413, f"Report larger than {limit} bytes.")
    now = timezone.now()
    if intake_rate_limited(system_id, now=now):
        response = _answer(429, "Too many reports from this system; try again later.")
        response["Retry-After"] = str(3600 - now.minute * 60 - now.second)
        return response
    body = request.read(limit + 1)
    if len(body) > limit:
        return _answer(413, f"Report larger than {limit} bytes.")
    try:
        report = intake.parse(system_id, body)
    except intake.Refused as refused:
        return _answer(refused.status, refused.message)
    try:
        oops_id = crash_receive(system_id, report, now=now)
    except Replayed:
        return _answer(409, "Crash already reported.")
    return _answer(200, f"{oops_id} OOPSID")

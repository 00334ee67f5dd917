"""Triager routes: restricted crash reports and overrides (mounted at the site root)."""

from django.urls import path

from overview.triage import views as triage_views

app_name = "triage"

urlpatterns = [
    path("problems/<int:pk>/reports/", triage_views.bucket_reports, name="reports"),
    path("problems/<int:pk>/override/", triage_views.bucket_override, name="override_bucket"),
    path("reports/<int:pk>/", triage_views.report, name="report"),
    path("overrides/", triage_views.overrides, name="overrides"),
    path("overrides/increased-rate/", triage_views.rate_override, name="override_rate"),
    path("overrides/<int:pk>/revoke/", triage_views.revoke, name="revoke"),
]

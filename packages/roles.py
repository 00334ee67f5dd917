"""The two privileged groups and what each may do. Plain data, read by a migration and tests."""

TRIAGERS = "triagers"
ARCHIVE_ADMINS = "archive-admins"

GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    TRIAGERS: (
        "overview.view_crash_report_content",
        "overview.view_crashreport",
        "overview.override_problem",
        "overview.add_override",
        "overview.change_override",
        "overview.view_override",
        "overview.view_problem",
        "overview.view_errorbucket",
        "packages.view_publication",
        "packages.view_phasingevent",
        "packages.view_release",
        "packages.view_sourcepackage",
        "packages.view_policy",
    ),
    ARCHIVE_ADMINS: (
        "packages.change_phasing",
        "packages.view_publication",
        "packages.change_publication",
        "packages.view_phasingevent",
        "packages.view_release",
        "packages.change_release",
        "packages.view_sourcepackage",
        "packages.view_person",
        "packages.view_policy",
        "packages.add_policy",
        "packages.change_policy",
        "packages.delete_policy",
        "overview.view_problem",
        "overview.view_errorbucket",
        "overview.view_override",
        "overview.view_notification",
        "packages.view_sourcesync",
        # Where notices go (docs/teams.md): endpoints and their deliveries.
        "overview.view_webhookendpoint",
        "overview.add_webhookendpoint",
        "overview.change_webhookendpoint",
        "overview.delete_webhookendpoint",
        "overview.view_webhookdelivery",
    ),
}

"""Create the triagers and archive-admins groups with their permissions."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


# The groups as this migration made them: a migration's effect must not change when the
# live roles do (later changes are migrations of their own).
GROUP_PERMISSIONS = {
    "triagers": (
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
    "archive-admins": (
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
        "overview.view_sourcesync",
    ),
}


def create_groups(apps, schema_editor):
    # Permissions are normally made after all migrations; the groups need them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codes in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        for code in codes:
            app_label, codename = code.split(".")
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUP_PERMISSIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0001_initial"),
        ("packages", "0002_phasing_permission"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]

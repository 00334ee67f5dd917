"""Create the triagers and archive-admins groups with their permissions."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def create_groups(apps, schema_editor):
    from overview.roles import GROUP_PERMISSIONS

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
    from overview.roles import GROUP_PERMISSIONS

    apps.get_model("auth", "Group").objects.filter(name__in=GROUP_PERMISSIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0001_initial"),
        ("packages", "0002_phasing_permission"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]

"""SourceSync moves from overview to packages: the publication sync, which packages owns,
records its status there. The table is renamed; rows, content type and permissions stay."""

from django.db import migrations, models


def move_content_type(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label="packages", model="sourcesync").exists():
        ContentType.objects.filter(app_label="overview", model="sourcesync").update(
            app_label="packages"
        )


def move_content_type_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label="overview", model="sourcesync").exists():
        ContentType.objects.filter(app_label="packages", model="sourcesync").update(
            app_label="overview"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("packages", "0005_event_kinds_for_release_and_policy"),
        ("overview", "0004_notification_body_hold_reasons"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SourceSync",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=40, unique=True)),
                        (
                            "kind",
                            models.CharField(help_text="publications or crashes", max_length=20),
                        ),
                        ("last_attempt_at", models.DateTimeField(blank=True, null=True)),
                        ("last_success_at", models.DateTimeField(blank=True, null=True)),
                        ("last_error", models.TextField(blank=True)),
                        ("last_summary", models.JSONField(blank=True, default=dict)),
                    ],
                    options={"db_table": "overview_sourcesync"},
                )
            ],
            database_operations=[],
        ),
        migrations.AlterModelTable(name="sourcesync", table=None),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]

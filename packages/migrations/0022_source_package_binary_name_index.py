# Which packages build a binary of a given name: the ingest's dependents' counts ask it per batch.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('packages', '0021_source_package_binaries'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='sourcepackagebinary',
            index=models.Index(fields=['name'], name='source_package_binary_name_idx'),
        ),
    ]

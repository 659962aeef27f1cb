from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inversion', '0001_model_inversion_challenges'),
    ]

    operations = [
        migrations.AddField(
            model_name='inversionchallenge',
            name='release_per_class',
            field=models.BooleanField(default=False, help_text='Show participants which classes the evaluator recognised in each of their submissions (one evaluator answer per class beyond the released accuracy; off by default).'),
        ),
    ]

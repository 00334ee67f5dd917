"""The archive admins' console: publications, releases, policies, the phasing audit trail.

One module per model admin; `actions` holds the reason-page machinery they share and
`forms` their forms. The overview app extends the publication admin with its problems.
"""

from django.contrib import admin

from packages.admin import (  # noqa: F401
    events,
    identities,
    people,
    policies,
    publications,
    releases,
    scheduled,
)
from packages.admin.forms import AdminLoginForm

admin.site.site_header = "Phasing administration"
admin.site.site_title = "Phasing admin"
admin.site.index_title = "Rollouts, releases and policies"
admin.site.site_url = "/"
admin.site.login_form = AdminLoginForm

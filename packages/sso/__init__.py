"""Single sign-on over OpenID Connect (mozilla-django-oidc): the provider found by discovery,
the backend that checks the ID token and maps a groups claim to the triagers and
archive-admins groups at each sign-in, and the password rule for everyone else. May import
packages.models and packages.roles; never overview.
"""

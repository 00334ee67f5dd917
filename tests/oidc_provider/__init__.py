"""A real OpenID Connect provider for the single sign-on tests: django-oauth-toolkit in a
second process, with its own settings and database (see serve.py)."""

"""python -m tests.oidc_provider.serve PORT: migrate a fresh database, register Phasing as
a confidential client (PKCE required), and serve the provider on 127.0.0.1:PORT.

Environment: OIDC_TEST_DB (the SQLite file), OIDC_TEST_PRIVATE_KEY (the RSA key, PEM),
OIDC_TEST_REDIRECT_URI and OIDC_TEST_LOGOUT_REDIRECT_URI (Phasing's callback and home).
"""

import os
import sys


def main(port: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.oidc_provider.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    Application.objects.create(
        name="phasing",
        client_id="phasing",
        client_secret="phasing-secret",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=os.environ["OIDC_TEST_REDIRECT_URI"],
        post_logout_redirect_uris=os.environ["OIDC_TEST_LOGOUT_REDIRECT_URI"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    call_command(
        "runserver", f"127.0.0.1:{port}", use_reloader=False, use_threading=True, skip_checks=True
    )


if __name__ == "__main__":
    main(sys.argv[1])

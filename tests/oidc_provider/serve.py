"""python -m tests.oidc_provider.serve PORT: migrate a fresh database, register Phasing as
a confidential client "phasing" (secret "phasing-secret", PKCE required), and serve the
provider on 127.0.0.1:PORT, issuer http://127.0.0.1:PORT/o. The tests start it; so can a
person trying single sign-on with the demo (docs/teams.md).

Environment (each with a default for the demo): OIDC_TEST_DB (the SQLite file),
OIDC_TEST_PRIVATE_KEY (the RSA key, PEM), OIDC_TEST_REDIRECT_URI and
OIDC_TEST_LOGOUT_REDIRECT_URI (Phasing's callback and home page).
"""

import os
import sys
import tempfile


def _defaults() -> None:
    if "OIDC_TEST_PRIVATE_KEY" not in os.environ:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        os.environ["OIDC_TEST_PRIVATE_KEY"] = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
    os.environ.setdefault("OIDC_TEST_DB", os.path.join(tempfile.mkdtemp(), "idp.sqlite3"))
    os.environ.setdefault("OIDC_TEST_REDIRECT_URI", "http://127.0.0.1:8000/oidc/callback/")
    os.environ.setdefault("OIDC_TEST_LOGOUT_REDIRECT_URI", "http://127.0.0.1:8000/")


def main(port: str) -> None:
    _defaults()
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

"""Single sign-on against a real OpenID Connect provider in a second process: discovery,
the code flow with PKCE, group mapping at each sign-in, logout, and ID tokens refused for
a bad signature, issuer, audience, nonce or expiry, or a groups claim that is not a list."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation

from packages.models import SingleSignOnIdentity, SourceSync
from packages.roles import ARCHIVE_ADMINS, TRIAGERS
from packages.sso import discovery
from packages.sso.backends import SingleSignOnBackend
from tests.conftest import group_named
from tests.packages.sso.conftest import new_private_key

pytestmark = [pytest.mark.real_clock, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def groups(db):
    group_named(TRIAGERS), group_named(ARCHIVE_ADMINS)


def names(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_discovery_finds_the_providers_endpoints(sso):
    found = discovery.provider()
    assert found.issuer == sso.issuer
    assert found.token_endpoint == sso.issuer + "/token/"
    assert found.jwks_uri.startswith(sso.issuer)


def test_the_sign_in_is_the_code_flow_with_pkce_and_a_nonce(sso, client):
    start = client.get("/oidc/authenticate/")
    query = parse_qs(urlsplit(start["Location"]).query)
    assert start["Location"].startswith(sso.issuer + "/authorize/")
    assert query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["nonce"][0] and query["state"][0]
    assert set(query["scope"][0].split()) == {"openid", "email", "profile", "groups"}


def test_a_person_signs_in_and_their_provider_groups_become_their_rights(sso, browser):
    sso.user("alice", claims={"groups": ["archive-admins", "ubuntu-dev"]})
    answer = browser.sign_in("alice")
    assert answer.status_code == 302 and answer["Location"] == "/"
    user = User.objects.get(username="alice")
    assert names(user) == {ARCHIVE_ADMINS}
    assert user.is_staff and not user.is_superuser and not user.has_usable_password()
    identity = SingleSignOnIdentity.objects.get(user=user)
    assert identity.issuer == sso.issuer and identity.groups == ["archive-admins", "ubuntu-dev"]
    assert browser.client.get("/admin/").status_code == 200


def test_a_deactivated_account_loses_its_session_at_once(sso, browser):
    sso.user("frank", claims={"groups": ["archive-admins"]})
    browser.sign_in("frank")
    assert browser.client.get("/admin/").status_code == 200
    User.objects.filter(username="frank").update(is_active=False)
    assert browser.client.get("/admin/").status_code == 302


def test_removal_at_the_provider_removes_the_rights_at_the_next_sign_in(sso, browser, client):
    sso.user("bob", claims={"groups": ["triagers", "archive-admins"]})
    browser.sign_in("bob")
    assert names(User.objects.get(username="bob")) == {TRIAGERS, ARCHIVE_ADMINS}
    sso.user("bob", claims={"groups": ["triagers"]})
    client.logout()
    browser.sign_in("bob")
    user = User.objects.get(username="bob")
    assert names(user) == {TRIAGERS} and not user.is_staff
    assert User.objects.filter(username__startswith="bob").count() == 1


def test_a_missing_groups_claim_signs_in_without_rights(sso, browser):
    sso.user("carol", claims={})
    assert browser.sign_in("carol")["Location"] == "/"
    assert names(User.objects.get(username="carol")) == set()


def test_a_groups_claim_that_is_not_a_list_is_refused(sso, browser, caplog):
    sso.user("dave", claims={"groups": "archive-admins"})
    answer = browser.sign_in("dave")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?sso=refused"
    assert not User.objects.filter(username="dave").exists()
    assert "not a list of names" in caplog.text


def test_a_provider_account_never_takes_over_a_local_account_of_the_same_name(
    sso, browser, superuser
):
    sso.user("root", claims={"groups": []})
    browser.sign_in("root")
    sso_user = SingleSignOnIdentity.objects.get().user
    assert sso_user.pk != superuser.pk and sso_user.username.startswith("root~")
    assert not sso_user.is_superuser


def test_sign_out_ends_the_session_here_and_at_the_provider(sso, browser):
    sso.user("erin", claims={"groups": ["triagers"]})
    browser.sign_in("erin")
    answer = browser.client.post("/oidc/logout/")
    assert answer.status_code == 302
    assert answer["Location"].startswith(sso.issuer + "/logout/")
    assert "id_token_hint" in parse_qs(urlsplit(answer["Location"]).query)
    assert "_auth_user_id" not in browser.client.session
    at_provider = browser.at_provider.get(answer["Location"], allow_redirects=False)
    assert at_provider.status_code == 302 and at_provider.headers["Location"] == (
        "http://testserver/"
    )
    # Signed out at the provider too: the next sign-in asks for the password again.
    again = browser.client.get("/oidc/authenticate/")
    to_login = browser.at_provider.get(again["Location"], allow_redirects=False)
    assert "/accounts/login/" in to_login.headers["Location"]


def test_a_callback_whose_nonce_is_not_the_one_sent_is_refused(sso, browser, monkeypatch):
    sso.user("gina", claims={"groups": ["archive-admins"]})
    original = browser.client.get

    def nonce_replaced(path, *args, **kwargs):
        answer = original(path, *args, **kwargs)
        if path == "/oidc/authenticate/":
            session = browser.client.session
            for state in session["oidc_states"].values():
                state["nonce"] = "not-the-nonce-sent"
            session.save()
        return answer

    monkeypatch.setattr(browser.client, "get", nonce_replaced)
    answer = browser.sign_in("gina")
    assert answer["Location"] == "/accounts/login/?sso=refused"
    assert not User.objects.filter(username="gina").exists()


def test_the_login_page_offers_the_providers_button(sso, client):
    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with Test ID" in page and 'href="/oidc/authenticate/"' in page


def test_password_login_can_be_kept_for_break_glass_accounts_only(settings, client, db):
    from tests.factories import UserFactory

    settings.PHASING_PASSWORD_LOGIN = False
    settings.PHASING_BREAK_GLASS_USERS = ["oncall"]
    UserFactory(username="member1")
    UserFactory(username="oncall")
    password = "correct horse battery staple"
    refused = client.post("/accounts/login/", {"username": "member1", "password": password})
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    allowed = client.post("/accounts/login/", {"username": "oncall", "password": password})
    assert allowed.status_code == 302 and "_auth_user_id" in client.session


# ID tokens the provider's keys published at its JWKS endpoint must refuse: each is
# signed by the provider's own key (or another for the bad signature) and is wrong in one way.


def token(sso, *, key: str | None = None, **changes) -> str:
    now = int(time.time())
    claims = {
        "iss": sso.issuer,
        "aud": "phasing",
        "sub": "42",
        "iat": now,
        "exp": now + 300,
        "nonce": "n-1",
        **changes,
    }
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, key or sso.private_key, algorithm="RS256", headers={"kid": sso.kid})


def test_a_well_made_token_passes_the_checks(sso):
    assert SingleSignOnBackend().verify_token(token(sso), nonce="n-1")["sub"] == "42"


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"key": "other"}, "InvalidSignatureError"),
        ({"iss": "https://evil.example.org/o"}, "InvalidIssuerError"),
        ({"aud": "another-client"}, "InvalidAudienceError"),
        ({"exp": 1_000_000_000}, "ExpiredSignatureError"),
        ({"iat": None}, "MissingRequiredClaimError"),
        ({"nonce": "n-2"}, "nonce"),
    ],
)
def test_a_token_wrong_in_one_way_is_refused(sso, changes, why):
    if changes.get("key") == "other":
        changes = {"key": new_private_key()}
    with pytest.raises(SuspiciousOperation, match=why):
        SingleSignOnBackend().verify_token(token(sso, **changes), nonce="n-1")


def test_a_provider_that_does_not_answer_is_a_message_not_an_error(settings, client, db):
    settings.PHASING_OIDC_ENABLED = True
    settings.PHASING_OIDC_ISSUER = "http://127.0.0.1:9/o"
    discovery.forget()
    answer = client.get("/oidc/authenticate/")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?sso=unavailable"
    assert "does not answer just now" in client.get(answer["Location"]).content.decode()
    fault = SourceSync.objects.get(name="single sign-on")
    assert fault.failing_since is not None and "127.0.0.1" not in fault.last_error


def test_single_sign_on_is_not_found_when_it_is_not_configured(client, db):
    assert client.get("/oidc/authenticate/").status_code == 404

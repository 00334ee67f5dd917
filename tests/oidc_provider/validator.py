"""The claims the test provider gives: the user's name and e-mail, and whatever extra
claims a test set for that user (a groups list, a groups string, or none at all)."""

from oauth2_provider.oauth2_validators import OAuth2Validator

# username -> extra claims, set by the tests through /test/users/<username>.
EXTRA_CLAIMS: dict[str, dict] = {}


class Validator(OAuth2Validator):
    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "groups"}

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            **EXTRA_CLAIMS.get(user.username, {}),
        }

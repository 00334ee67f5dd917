"""Which account at the identity provider an account here is (single sign-on)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SingleSignOnIdentity(models.Model):
    """An account made or matched by single sign-on: the provider's issuer and subject, never
    the e-mail address or the user name, so a local account is never taken over by a
    provider's account of the same name."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    # The groups claim as last read, for the admin: why this person has the rights they have.
    groups = models.JSONField(default=list, blank=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"
        constraints = [
            models.UniqueConstraint(fields=("issuer", "subject"), name="sso_identity_unique")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"

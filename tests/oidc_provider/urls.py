import json

from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from tests.oidc_provider.validator import EXTRA_CLAIMS


@csrf_exempt
def user(request, username):
    """POST {"password": ..., "claims": {...}}: make or change a user and their claims."""
    body = json.loads(request.body)
    account, _ = get_user_model().objects.get_or_create(
        username=username, defaults={"email": f"{username}@example.org"}
    )
    account.set_password(body.get("password", "pw"))
    account.save()
    EXTRA_CLAIMS[username] = body.get("claims", {})
    return HttpResponse("ok")


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("test/users/<str:username>", user),
]

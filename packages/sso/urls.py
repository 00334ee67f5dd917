from django.urls import path

from packages.sso import views

urlpatterns = [
    path("authenticate/", views.SignInView.as_view(), name="oidc_authentication_init"),
    path("callback/", views.CallbackView.as_view(), name="oidc_authentication_callback"),
    path("logout/", views.sign_out, name="oidc_logout"),
]

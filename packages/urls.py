from django.urls import path

from packages import views

app_name = "packages"

urlpatterns = [
    # path: a name from before names were checked may hold a "/"; it still has a page.
    path("source/<path:name>/", views.history, name="history"),
]

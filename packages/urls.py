from django.urls import path

from packages import views

app_name = "packages"

urlpatterns = [
    path("source/<str:name>/", views.history, name="history"),
]

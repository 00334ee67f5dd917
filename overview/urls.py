from django.urls import path

from overview import views

app_name = "overview"

urlpatterns = [
    path("", views.index, name="index"),
    path("problems/<int:pk>/", views.problem, name="problem"),
]

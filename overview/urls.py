from django.urls import path

from overview import feeds, views

app_name = "overview"

urlpatterns = [
    path("", views.index, name="index"),
    path("problems/<int:pk>/", views.problem, name="problem"),
    path("machine/", views.machine, name="machine"),
    path("sources/", views.sources, name="sources"),
    path("feeds/", feeds.feeds_page, name="feeds"),
    path("feeds/halts/", feeds.HaltsFeed(), name="feed-halts"),
    path("feeds/changes/", feeds.ChangesFeed(), name="feed-changes"),
]

from django.urls import path

from overview.pages import feeds, history, update, views

app_name = "overview"

urlpatterns = [
    path("", views.index, name="index"),
    # path: a name from before names were checked may hold a "/"; it still has a page.
    path("source/<path:name>/", history.history, name="history"),
    path("problems/<int:pk>/", views.problem, name="problem"),
    path("machine/", views.machine, name="machine"),
    path("updates/<int:pk>/", update.update, name="update"),
    path("updates/<int:pk>/sign-off/<int:change_pk>/", update.sign_off, name="update-sign-off"),
    path("updates/<int:pk>/<slug:action>/", update.act, name="update-act"),
    path("sources/", views.sources, name="sources"),
    path("feeds/", feeds.feeds_page, name="feeds"),
    path("feeds/halts/", feeds.HaltsFeed(), name="feed-halts"),
    path("feeds/changes/", feeds.ChangesFeed(), name="feed-changes"),
]

from django.urls import path

from teams.api import views

urlpatterns = [
    path("teams", views.TeamListView.as_view(), name="teams"),
    path("teams/<uid:team_id>", views.TeamDetailView.as_view(), name="team-detail"),
    path("teams/<uid:team_id>/unsubscribe", views.TeamUnsubscribeView.as_view(), name="team-unsubscribe"),
    path("teams/<uid:team_id>/reactivate", views.TeamReactivateView.as_view(), name="team-reactivate"),
]

from django.urls import path

from accounts.api import views

urlpatterns = [
    path("auth/register", views.RegisterView.as_view(), name="auth-register"),
    path("auth/token", views.TokenView.as_view(), name="auth-token"),
    path("auth/token/refresh", views.TokenRefreshView.as_view(), name="auth-token-refresh"),
    path("auth/api-keys", views.ApiKeyListView.as_view(), name="api-keys"),
    path("auth/api-keys/<uid:key_id>", views.ApiKeyDetailView.as_view(), name="api-key-detail"),
]

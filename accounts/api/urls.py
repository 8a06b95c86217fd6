from django.urls import path

from accounts.api import views

urlpatterns = [
    path("auth/register", views.RegisterView.as_view(), name="auth-register"),
    path("auth/token", views.TokenView.as_view(), name="auth-token"),
    path("auth/token/refresh", views.TokenRefreshView.as_view(), name="auth-token-refresh"),
    path("auth/me", views.MeView.as_view(), name="auth-me"),
    path("auth/logout", views.LogoutView.as_view(), name="auth-logout"),
    path("auth/password/change", views.PasswordChangeView.as_view(), name="auth-password-change"),
    path("auth/password/reset", views.PasswordResetView.as_view(), name="auth-password-reset"),
    path("auth/password/reset/confirm", views.PasswordResetConfirmView.as_view(), name="auth-password-reset-confirm"),
    path("auth/email/verify", views.EmailVerifyView.as_view(), name="auth-email-verify"),
    path("auth/email/verify/resend", views.EmailVerifyResendView.as_view(), name="auth-email-verify-resend"),
    path("auth/api-keys", views.ApiKeyListView.as_view(), name="api-keys"),
    path("auth/api-keys/<uid:key_id>", views.ApiKeyDetailView.as_view(), name="api-key-detail"),
]

from django.urls import path

from webhooks_app.api import views

urlpatterns = [
    path("webhooks/payments", views.PaymentsWebhookView.as_view(), name="webhooks-payments"),
    path("webhooks/subscriptions", views.SubscriptionListView.as_view(), name="webhook-subscriptions"),
    path(
        "webhooks/subscriptions/<uid:subscription_id>",
        views.SubscriptionDetailView.as_view(),
        name="webhook-subscription-detail",
    ),
    path(
        "webhooks/subscriptions/<uid:subscription_id>/rotate-secret",
        views.SubscriptionRotateSecretView.as_view(),
        name="webhook-subscription-rotate-secret",
    ),
    path(
        "webhooks/subscriptions/<uid:subscription_id>/deliveries",
        views.SubscriptionDeliveriesView.as_view(),
        name="webhook-subscription-deliveries",
    ),
]

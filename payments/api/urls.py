from django.urls import path

from payments.api import views

urlpatterns = [
    path("payouts", views.PayoutListView.as_view(), name="payouts"),
    path("payouts/account", views.PayoutAccountView.as_view(), name="payout-account"),
    path("payouts/balance", views.BalanceView.as_view(), name="payout-balance"),
    path("payouts/earnings", views.EarningListView.as_view(), name="payout-earnings"),
    path("payouts/activity", views.ActivityView.as_view(), name="payout-activity"),
    # After the fixed paths: `uid` matches any segment (a malformed id is a 422).
    path("payouts/<uid:payout_id>", views.PayoutDetailView.as_view(), name="payout-detail"),
]

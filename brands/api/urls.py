from django.urls import path

from brands.api import ads_views

urlpatterns = [
    path("ads/simulate", ads_views.AdSimulateView.as_view(), name="ads-simulate"),
]

from django.urls import path

from assistant.api import views

urlpatterns = [
    path("assistant/messages", views.AssistantMessagesView.as_view(), name="assistant-messages"),
    path("assistant/conversations", views.AssistantConversationsView.as_view(), name="assistant-conversations"),
    path("assistant/me", views.AssistantMeView.as_view(), name="assistant-me"),
    path("allmodelchat/models", views.ImageModelsView.as_view(), name="allmodelchat-models"),
    path("allmodelchat/credits", views.CreditsView.as_view(), name="allmodelchat-credits"),
    path("allmodelchat/credits/top-up", views.CreditTopUpView.as_view(), name="allmodelchat-credits-top-up"),
    path(
        "allmodelchat/credits/transactions",
        views.CreditTransactionsView.as_view(),
        name="allmodelchat-credits-transactions",
    ),
    path("allmodelchat/generate/image", views.ImageGenerateView.as_view(), name="allmodelchat-generate-image"),
    path("brief/generate", views.BriefGenerateView.as_view(), name="brief-generate"),
    path("brief/suggestions", views.BriefSuggestionsView.as_view(), name="brief-suggestions"),
    path("signature/tagline", views.TaglineView.as_view(), name="signature-tagline"),
    path("signature/scrape-website", views.ScrapeWebsiteView.as_view(), name="signature-scrape-website"),
]

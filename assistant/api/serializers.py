from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from assistant.domain.catalogue import ATTACHMENT_TYPES, CHANNEL_CHOICES, IMAGE_PROVIDERS, OBJECTIVE_CHOICES, TONES
from assistant.domain.image_models import IMAGE_MODELS, MODEL_IDS
from assistant.models import AssistantMessage, CreditTopUp, CreditTransaction
from core.api.fields import BlankAsNullField, checkout_return_url
from payments.providers import PROVIDERS

# --- Assistant ---------------------------------------------------------------------------------------


class AttachmentSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=ATTACHMENT_TYPES, help_text="What the URL points at.")
    url = serializers.URLField(max_length=2048)
    name = serializers.CharField(max_length=200, required=False)


class AssistantMessageInput(serializers.Serializer):
    content = serializers.CharField(max_length=4000, help_text="What you say to the assistant, 1 to 4000 characters.")
    attachments = AttachmentSerializer(
        many=True,
        required=False,
        max_length=10,
        help_text="Up to 10 images or links to go with the message. A message with an image is of type `image`.",
    )


class AssistantMessageSerializer(serializers.ModelSerializer):
    role = serializers.ChoiceField(choices=AssistantMessage.Role.choices)
    message_type = serializers.ChoiceField(choices=AssistantMessage.MessageType.choices)
    attachments = AttachmentSerializer(many=True)

    class Meta:
        model = AssistantMessage
        fields = ["id", "role", "content", "message_type", "attachments", "created_at"]


class AssistantExchangeSerializer(serializers.Serializer):
    user_message = AssistantMessageSerializer(help_text="Your message, as stored.")
    assistant_message = AssistantMessageSerializer(help_text="The assistant's reply.")


class ConversationSerializer(serializers.Serializer):
    messages = AssistantMessageSerializer(many=True, help_text="Newest first.")
    has_more = serializers.BooleanField()
    total = serializers.IntegerField()
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Pass as `cursor` for the next page; null on the last page."
    )
    total_exact = serializers.BooleanField(default=True, help_text="Whether `total` is exact: always, here.")


# --- AllModelChat ------------------------------------------------------------------------------------


class ImageModelSerializer(serializers.Serializer):
    id = serializers.CharField(source="identifier", help_text="Send this as `model`.")
    provider = serializers.ChoiceField(choices=IMAGE_PROVIDERS)
    credit_cost = serializers.IntegerField(help_text="Credits one image takes.")
    default = serializers.BooleanField(help_text="Used when a request names no model.")
    available = serializers.BooleanField(help_text="False when the server has no credentials for its provider.")
    description = serializers.CharField()


class CreditPackSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="What to send as `pack` to `POST .../credits/top-up`.")
    credits = serializers.IntegerField(min_value=1, help_text="Credits the pack adds.")
    price = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="In major units, e.g. `5.00`.")
    currency = serializers.CharField(help_text="ISO 4217, lower case.")


class CreditBalanceSerializer(serializers.Serializer):
    credits = serializers.IntegerField(help_text="Your balance. Each image takes its model's `credit_cost`.")
    packs = CreditPackSerializer(many=True, help_text="Credit packs on sale.")


def _pack_ids() -> list[str]:
    from django.conf import settings

    return [pack["id"] for pack in settings.CREDIT_PACKS]


class CreditTopUpInput(serializers.Serializer):
    pack = serializers.ChoiceField(choices=_pack_ids(), help_text="A pack's `id` from `GET .../credits`.")
    success_url = checkout_return_url(help_text="Where the checkout page links after paying (optional).")
    cancel_url = checkout_return_url(help_text="Where the checkout page links after declining (optional).")


class CreditTopUpPaymentSerializer(serializers.ModelSerializer):
    """The marketplace's payment shape, for a credit pack."""

    provider = serializers.ChoiceField(choices=PROVIDERS)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    client_secret = serializers.CharField(help_text="Confirms the payment with the provider's client library.")
    checkout_url = BlankAsNullField(help_text="The provider's hosted page where you pay, or null.")

    class Meta:
        model = CreditTopUp
        fields = [
            "id",
            "provider",
            "provider_payment_id",
            "amount",
            "currency",
            "status",
            "client_secret",
            "checkout_url",
        ]


class CreditTransactionSerializer(serializers.ModelSerializer):
    delta = serializers.IntegerField(help_text="The change: positive adds credits, negative takes them.")
    balance_after = serializers.IntegerField(help_text="Your balance right after this change.")

    class Meta:
        model = CreditTransaction
        fields = ["id", "kind", "delta", "balance_after", "reason", "reference", "created_at"]


class ImageModelField(serializers.ChoiceField):
    """Any model of the registry is accepted (one whose provider is not configured is then a 503);
    the schema lists the models this server can use right now, so clients are offered only those."""

    def __init__(self, **kwargs):
        super().__init__(choices=MODEL_IDS, **kwargs)


class ImageModelFieldSchema(OpenApiSerializerFieldExtension):
    target_class = ImageModelField

    def map_serializer_field(self, auto_schema, direction):
        return {"type": "string", "enum": [m.identifier for m in IMAGE_MODELS if m.available]}


class ImageGenerateInput(serializers.Serializer):
    prompt = serializers.CharField(max_length=4000, help_text="What to draw, 1 to 4000 characters.")
    model = ImageModelField(
        required=False,
        help_text="An image model identifier from `GET /api/v1/allmodelchat/models`; the default model when omitted.",
    )
    conversation_id = serializers.UUIDField(help_text="The AllModelChat conversation the image belongs to.")
    brand_id = serializers.UUIDField(
        required=False,
        help_text="One of your brands: the image takes its newest brand kit's colours (background, accent, "
        "palette), logo and font where the model can use them (the local model draws them; a remote one is told "
        "the colours and the brand's description). Another user's brand or none: 404 `not_found`.",
    )


class ImageGenerationResultSerializer(serializers.Serializer):
    url = serializers.URLField(help_text="Absolute https URL of the PNG.")
    model = serializers.CharField()
    credit_cost = serializers.IntegerField(help_text="Credits this image took.")


# --- Free tools --------------------------------------------------------------------------------------


class BriefInput(serializers.Serializer):
    brand_name = serializers.CharField(max_length=200, required=False, help_text="The brand, or give `website`.")
    website = serializers.URLField(
        max_length=2048, required=False, help_text="The brand's site; names the brand when `brand_name` is absent."
    )
    objective = serializers.ChoiceField(choices=OBJECTIVE_CHOICES, default="awareness")
    audience = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)
    channels = serializers.ListField(
        child=serializers.ChoiceField(choices=CHANNEL_CHOICES),
        max_length=8,
        required=False,
        default=list,
        help_text="Where the campaign runs; the model picks when empty.",
    )

    def validate(self, attrs):
        if not attrs.get("brand_name") and not attrs.get("website"):
            raise serializers.ValidationError("Give a brand_name or a website.", code="brand_required")
        attrs["channels"] = list(dict.fromkeys(attrs["channels"]))
        return attrs


class DeliverableSerializer(serializers.Serializer):
    channel = serializers.CharField()
    format = serializers.CharField()
    description = serializers.CharField()


class CreativeBriefSerializer(serializers.Serializer):
    brand_name = serializers.CharField()
    website = serializers.URLField(allow_null=True)
    objective = serializers.ChoiceField(choices=OBJECTIVE_CHOICES)
    audience = serializers.CharField(allow_null=True)
    channels = serializers.ListField(child=serializers.ChoiceField(choices=CHANNEL_CHOICES))
    summary = serializers.CharField()
    key_message = serializers.CharField()
    tone = serializers.ListField(child=serializers.CharField())
    deliverables = DeliverableSerializer(many=True)
    kpis = serializers.ListField(child=serializers.CharField())
    timeline = serializers.ListField(child=serializers.CharField())
    model = serializers.CharField(help_text="The language model that wrote it (`local-template-1` is the local one).")


class BriefSuggestionsQuery(serializers.Serializer):
    q = serializers.CharField(
        max_length=100, required=False, default="", allow_blank=True, help_text="A business or product to tailor to."
    )


class BriefSuggestionsSerializer(serializers.Serializer):
    query = serializers.CharField(allow_blank=True)
    objectives = serializers.ListField(child=serializers.ChoiceField(choices=OBJECTIVE_CHOICES))
    audiences = serializers.ListField(child=serializers.CharField())
    channels = serializers.ListField(child=serializers.ChoiceField(choices=CHANNEL_CHOICES))
    model = serializers.CharField()


class TaglineInput(serializers.Serializer):
    brand_name = serializers.CharField(max_length=100)
    description = serializers.CharField(
        max_length=1000, required=False, default="", allow_blank=True, help_text="What the brand does."
    )
    tone = serializers.ChoiceField(choices=list(TONES), default="friendly")
    count = serializers.IntegerField(min_value=1, max_value=10, default=5)


# Not "Taglines": a generated client's model named like its own `taglines` field shadows it.
@extend_schema_serializer(component_name="SignatureTaglines")
class TaglinesSerializer(serializers.Serializer):
    brand_name = serializers.CharField()
    tone = serializers.ChoiceField(choices=list(TONES))
    taglines = serializers.ListField(child=serializers.CharField())
    model = serializers.CharField()


class ScrapeWebsiteInput(serializers.Serializer):
    url = serializers.URLField(max_length=2048, help_text="An http(s) page on a public address.")


class SocialLinksSerializer(serializers.Serializer):
    facebook = serializers.URLField(required=False)
    instagram = serializers.URLField(required=False)
    x = serializers.URLField(required=False, help_text="X or Twitter.")
    linkedin = serializers.URLField(required=False)
    youtube = serializers.URLField(required=False)
    tiktok = serializers.URLField(required=False)
    pinterest = serializers.URLField(required=False)


class HeadingSerializer(serializers.Serializer):
    level = serializers.IntegerField(min_value=1, max_value=3)
    text = serializers.CharField()


class WebsiteFactsSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="The URL asked for.")
    final_url = serializers.CharField(help_text="Where it led, after redirects.")
    truncated = serializers.BooleanField(help_text="True when the page was larger than 2 MiB and read in part.")
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    logo = serializers.CharField(allow_null=True, help_text="Absolute URL of the logo (or icon), if any.")
    colors = serializers.ListField(child=serializers.CharField(), help_text="Hex colours, most used first, up to 8.")
    social_links = SocialLinksSerializer()
    headings = HeadingSerializer(many=True, help_text="h1-h3 in page order, up to 30.")

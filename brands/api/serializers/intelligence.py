from __future__ import annotations

from rest_framework import serializers

from brands.api.fields import DomainField
from brands.models import Advertiser, Artifact, ResearchModule

MODULES_HELP = (
    "Module names: competitors, brand_classification, paid_media, organic_social, seo, website "
    "(the same as the research items)."
)


def module_list_field(**kwargs) -> serializers.ListField:
    kwargs.setdefault("help_text", MODULES_HELP)
    return serializers.ListField(child=serializers.ChoiceField(choices=ResearchModule.choices), max_length=6, **kwargs)


class AdvertiserRefInput(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    domain = DomainField(help_text="The advertiser is found by domain, or created with this name.")


class _MembersInput(serializers.Serializer):
    advertiser_ids = serializers.ListField(child=serializers.UUIDField(), max_length=500, required=False)
    advertisers = AdvertiserRefInput(many=True, required=False, max_length=500)

    def validate_advertiser_ids(self, value):
        value = list(dict.fromkeys(value))
        known = set(Advertiser.objects.filter(id__in=value).values_list("id", flat=True))
        missing = [str(i) for i in value if i not in known]
        if missing:
            raise serializers.ValidationError(f"No such advertiser: {missing[0]}.", code="unknown_advertiser")
        return value


class TrackedGroupCreateInput(_MembersInput):
    name = serializers.CharField(max_length=200)
    shared_modules = module_list_field(required=False)


class TrackedGroupMembersInput(_MembersInput):
    # Merged into the schema by core.api.schema.AutoSchema: at least one of the two lists, not empty.
    openapi_extra = {
        "anyOf": [
            {"required": ["advertiser_ids"], "properties": {"advertiser_ids": {"minItems": 1}}},
            {"required": ["advertisers"], "properties": {"advertisers": {"minItems": 1}}},
        ]
    }

    def validate(self, attrs):
        if not attrs.get("advertiser_ids") and not attrs.get("advertisers"):
            raise serializers.ValidationError("Give advertiser_ids or advertisers.", code="members_required")
        return attrs


class TrackedGroupUpdateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    shared_modules = module_list_field(
        required=False, help_text=MODULES_HELP + " Removing a module forks its membership: it keeps today's members."
    )
    expected_updated_at = serializers.DateTimeField(
        required=False,
        help_text="The group's updated_at as you read it. When the group changed since, nothing is written and "
        "the answer is 409 stale_write.",
    )


class ModuleQuery(serializers.Serializer):
    module = serializers.ChoiceField(
        choices=ResearchModule.choices, required=False, help_text="See the group as this module sees it."
    )


class TrackedGroupMemberSerializer(serializers.Serializer):
    advertiser_id = serializers.UUIDField(source="id")
    name = serializers.CharField()
    domain = serializers.CharField()
    industry = serializers.CharField()
    avatar_url = serializers.CharField()


class TrackedGroupSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    system_slug = serializers.CharField(help_text="Set on the groups the system keeps, e.g. 'competitors'; else ''.")
    shared_modules = serializers.ListField(child=serializers.ChoiceField(choices=ResearchModule.choices))
    module = serializers.ChoiceField(
        choices=ResearchModule.choices,
        allow_null=True,
        help_text="The module whose view of the group this is (the `module` query), or null.",
    )
    forked = serializers.BooleanField(
        help_text="Whether `module` has its own (forked) membership; without `module`, whether any module has."
    )
    forked_modules = serializers.ListField(
        child=serializers.ChoiceField(choices=ResearchModule.choices), help_text="Every forked module."
    )
    advertiser_ids = serializers.ListField(child=serializers.UUIDField())
    members = TrackedGroupMemberSerializer(many=True)


class ArtifactSerializer(serializers.ModelSerializer):
    class Meta:
        model = Artifact
        fields = ["id", "brand_id", "module", "kind", "title", "summary", "created_at"]


class ArtifactDetailSerializer(serializers.ModelSerializer):
    data = serializers.DictField()

    class Meta:
        model = Artifact
        fields = ["id", "brand_id", "module", "kind", "title", "summary", "created_at", "data"]

from __future__ import annotations

from rest_framework import serializers


class HealthChecksSerializer(serializers.Serializer):
    database = serializers.CharField(help_text='"ok", or "error: <kind>".')
    cache = serializers.CharField()
    broker = serializers.CharField()


class HealthSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "error"])
    checks = HealthChecksSerializer()

"""The brands API serializers, one module per area (as brands.api.views)."""

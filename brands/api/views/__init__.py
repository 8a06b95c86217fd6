"""The brands API views, one module per area (each with its serializers in brands.api.serializers)."""

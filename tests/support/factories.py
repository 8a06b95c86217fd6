from __future__ import annotations

import factory
from django.contrib.auth.models import Permission
from django.utils import timezone

from accounts.models import User
from tests.support.credits import credits_set

DEFAULT_PASSWORD = "a-long-test-password"


def permission_objects(names) -> list:
    """The Permission rows of "app_label.codename" names; an unknown name fails loudly."""
    found = []
    for name in names:
        app_label, codename = name.split(".")
        found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return found


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    # Verified, as an account that proved its address (a registration through the API starts unverified).
    email_verified_at = factory.LazyFunction(timezone.now)
    password = factory.PostGenerationMethodCall("set_password", DEFAULT_PASSWORD)

    @factory.post_generation
    def permissions(self, create, names, **kwargs):
        """`UserFactory(is_staff=True, permissions=["tasks_market.add_disputeresolution"])`: named Django
        permissions ("app_label.codename"), given to the user itself."""
        if create and names:
            self.user_permissions.add(*permission_objects(names))

    @factory.post_generation
    def credits(self, create, amount, **kwargs):
        """`UserFactory(credits=10)`: the user's balance (assistant's CreditBalance), with no ledger row."""
        if create and amount:
            credits_set(self, amount)

    @classmethod
    def _after_postgeneration(cls, instance, create, results=None):
        if create:
            instance.save()

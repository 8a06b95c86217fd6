from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class AssistantConfig(AppConfig):
    name = "assistant"

    def ready(self) -> None:
        from accounts.registry import CreditsKeeper, credits_keeper_register
        from assistant import checks, payment_handlers  # noqa: F401 - the deploy check, the top-up event handlers
        from assistant.domain.credit_packs import credit_pack_problems
        from assistant.selectors import credit_balance
        from assistant.services.credits import credits_grant_signup

        problems = credit_pack_problems(settings.CREDIT_PACKS, name="CREDIT_PACKS")
        if problems:
            raise ImproperlyConfigured("; ".join(problems))
        # Credits are this app's; accounts grants the starting ones and shows the balance through the keeper.
        credits_keeper_register(CreditsKeeper(grant=credits_grant_signup, balance=credit_balance))

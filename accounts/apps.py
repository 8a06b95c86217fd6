from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts import schema  # noqa: F401  (registers the bearer scheme with drf-spectacular)
        from accounts.selectors import api_key_is_live
        from core.http.idempotency import replay_guard_register

        replay_guard_register("api_key", api_key_is_live)

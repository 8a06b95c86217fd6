from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"

    def ready(self) -> None:
        from accounts.closure import account_closing_step_register
        from teams import payment_handlers  # noqa: F401 - registers its payment event handlers
        from teams.services import teams_wind_down

        # Subscriptions cancelled at the period's end when the account closes; accounts cannot import us.
        account_closing_step_register("team_subscriptions", teams_wind_down)

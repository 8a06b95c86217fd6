"""The rate-limit rules: one fixed window and cap per bucket (docs/decisions.md#rate-limits). Apart from the
limiter so that the override model can offer them as choices without importing the limiter."""

from __future__ import annotations

from dataclasses import dataclass

MINUTE = 60
HOUR = 3600


@dataclass(frozen=True)
class Rule:
    name: str
    limit: int
    period: int  # seconds

    @property
    def rate(self) -> str:
        return f"{self.limit}/{self.period}s"


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule("default", 300, MINUTE),
        Rule("tasks_create", 60, MINUTE),
        Rule("tasks", 300, MINUTE),
        Rule("webhooks", 100, MINUTE),
        Rule("brief_generate", 10, HOUR),
        Rule("brief_suggestions", 60, HOUR),
        Rule("signature_tagline", 10, HOUR),
        Rule("signature_scrape_website", 5, HOUR),
        # Each reset request mails the account's owner, and each confirm guesses a token.
        Rule("auth_password_reset", 5, HOUR),
        Rule("auth_password_reset_confirm", 10, MINUTE),
        # Each registration is a new account with free credits: one client opens few an hour.
        Rule("auth_register", 10, HOUR),
    )
}

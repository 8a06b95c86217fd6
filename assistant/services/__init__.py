"""Writes of the assistant app, by concern: the conversation (chat), the credit ledger (credits) and image
generation (images). The names below are the app's service interface."""

from assistant.services.chat import Exchange, assistant_delete, assistant_message_send
from assistant.services.credits import (
    TopUpMismatch,
    credit_pack,
    credit_top_up_apply_failed,
    credit_top_up_apply_succeeded,
    credit_top_up_link_intent,
    credit_top_up_start,
    credits_adjust,
    credits_grant_signup,
)
from assistant.services.images import image_generate, image_generation_fail, image_generations_refund_stale

__all__ = [
    "Exchange",
    "TopUpMismatch",
    "assistant_delete",
    "assistant_message_send",
    "credit_pack",
    "credit_top_up_apply_failed",
    "credit_top_up_apply_succeeded",
    "credit_top_up_link_intent",
    "credit_top_up_start",
    "credits_adjust",
    "credits_grant_signup",
    "image_generate",
    "image_generation_fail",
    "image_generations_refund_stale",
]

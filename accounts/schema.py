from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.BearerAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A JWT access token from `POST /api/v1/auth/token`, or an API key `bmk_<prefix>_<secret>` "
                "on the operations that accept keys (tasks, agents, webhook subscriptions, ad simulator)."
            ),
        }

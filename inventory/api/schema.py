"""OpenAPI extensions: the bearer token scheme (so ``check --deploy`` stays quiet)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "inventory.api.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "API token from your profile page: `Authorization: Bearer ct_...`",
        }

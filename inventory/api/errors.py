"""One error shape for the whole API: ``{"errors": {field: [messages]}}`` plus DRF's detail."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_handler


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "message_dict"):
            exc = exceptions.ValidationError(exc.message_dict)
        else:
            exc = exceptions.ValidationError({"non_field_errors": exc.messages})
    return drf_handler(exc, context)


class PayloadTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "Request body too large."
    default_code = "payload_too_large"

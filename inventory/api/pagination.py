from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request):
        """DRF ignores a ``page_size`` it cannot read; a client that asked for one gets a 400."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None and not (raw.isdigit() and int(raw) >= 1):
            raise ValidationError(
                {self.page_size_query_param: [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return super().get_page_size(request)

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for p in params:
            if p["name"] == self.page_size_query_param or p["name"] == self.page_query_param:
                p["schema"].update(minimum=1)
        return params

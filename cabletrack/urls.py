from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("inventory.api.urls")),
    path("", include("inventory.urls")),
]

handler500 = "inventory.views.errors.server_error"
handler404 = "inventory.views.errors.page_not_found"
handler403 = "inventory.views.errors.permission_denied"
handler400 = "inventory.views.errors.bad_request"

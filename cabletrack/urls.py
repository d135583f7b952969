from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("inventory.api.urls")),
    path("", include("inventory.urls")),
]

handler500 = "inventory.views.errors.server_error"

from django.contrib.auth import views as auth_views
from django.urls import path

from .views import forecast as forecast_views
from .views import labels as label_views
from .views import pages

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<str:name>", pages.rack_page, name="rack-page"),
    # Labels: the print form / bulk-action target, and background batches.
    path("labels/print/", label_views.labels_print, name="labels-print"),
    path("labels/batches/<uuid:uid>/", label_views.label_batch, name="label-batch"),
    path("labels/batches/<uuid:uid>/status", label_views.label_batch_status, name="label-batch-status"),
    path("labels/batches/<uuid:uid>/download", label_views.label_batch_download, name="label-batch-download"),
    path("forecast/", forecast_views.forecast_page, name="forecast"),
    path("forecast/spares.csv", forecast_views.spares_csv, name="forecast-spares-csv"),
]

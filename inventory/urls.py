from django.contrib.auth import views as auth_views
from django.urls import path

from .views import alerts, pages

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<str:name>", pages.rack_page, name="rack-page"),
    # Alerts, maintenance, wiring validation (rules helper)
    path("alerts/", alerts.alert_list, name="alert-list"),
    path("alerts/<int:pk>/", alerts.alert_detail, name="alert-detail"),
    path("alerts/<int:pk>/acknowledge", alerts.alert_acknowledge, name="alert-acknowledge"),
    path("alerts/<int:pk>/silence", alerts.alert_silence, name="alert-silence"),
    path("maintenance/", alerts.maintenance, name="maintenance"),
    path("vendors/compare/", alerts.vendor_comparison, name="vendor-compare"),
    path("r/<str:name>/bringup", alerts.bringup, name="rack-bringup"),
    path("topology/export.<str:fmt>", alerts.topology_export, name="topology-export"),
    path("metrics", alerts.metrics, name="metrics"),
]

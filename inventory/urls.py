from django.contrib.auth import views as auth_views
from django.urls import path

from .views import desk, pages

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<str:name>", pages.rack_page, name="rack-page"),
    # Technician actions on the cable page.
    path("c/<str:label>/fault", pages.cable_fault, name="cable-fault"),
    path("c/<str:label>/serviced", pages.cable_serviced, name="cable-serviced"),
    path("c/<str:label>/swap", pages.cable_swap, name="cable-swap"),
    path("c/<str:label>/replace", pages.cable_replace, name="cable-replace"),
    path("c/<str:label>/edit", desk.cable_edit, name="cable-edit"),
    path("t/<int:pk>", pages.transceiver_detail, name="transceiver-detail"),
    # Desk pages.
    path("cables/", desk.cable_list, name="cable-list"),
    path("cables/new", desk.cable_create, name="cable-create"),
    path("cables/status", desk.cable_bulk_status, name="cable-bulk-status"),
    path("cables/import", desk.cable_plan_import, name="cable-import"),
    path("transceivers/", desk.transceiver_list, name="transceiver-list"),
    path("transceivers/new", desk.transceiver_create, name="transceiver-create"),
    path("t/<int:pk>/edit", desk.transceiver_edit, name="transceiver-edit"),
]

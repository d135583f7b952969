from django.contrib.auth import views as auth_views
from django.urls import path

from .views import forecast as forecast_views
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
    path("forecast/", forecast_views.forecast_page, name="forecast"),
    path("forecast/spares.csv", forecast_views.spares_csv, name="forecast-spares-csv"),
]

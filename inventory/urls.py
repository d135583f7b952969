from django.contrib.auth import views as auth_views
from django.urls import path

from .views import pages
from .views import retests as retest_pages

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<str:name>", pages.rack_page, name="rack-page"),
    # Retests: planning (desk and phone), exports, the on-demand sweep; reminder preferences.
    path("retests/", retest_pages.retests_plan, name="retests-plan"),
    path("retests/worklist.csv", retest_pages.retests_csv, name="retests-csv"),
    path("retests/worklist.pdf", retest_pages.retests_pdf, name="retests-pdf"),
    path("retests/sweep/", retest_pages.retests_sweep_now, name="retests-sweep"),
    path("profile/", retest_pages.profile, name="profile"),
]

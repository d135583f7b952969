from django.contrib.auth import views as auth_views
from django.urls import path

from .views import account, pages

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<str:name>", pages.rack_page, name="rack-page"),
    # Security: the user's profile and API tokens.
    path("profile/", account.profile, name="profile"),
    path("profile/tokens/<int:pk>/revoke", account.token_revoke, name="token-revoke"),
]

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from . import forecast as forecast_api
from . import views

router = DefaultRouter()
router.register("sites", views.SiteViewSet)
router.register("rooms", views.RoomViewSet)
router.register("rows", views.RowViewSet)
router.register("racks", views.RackViewSet)
router.register("vendors", views.VendorViewSet)
router.register("devices", views.DeviceViewSet)
router.register("cages", views.CageViewSet)
router.register("ports", views.PortViewSet)
router.register("transceiver-models", views.TransceiverModelViewSet)
router.register("transceivers", views.TransceiverViewSet)
router.register("cables", views.CableViewSet, basename="cable")
router.register("links", views.LinkViewSet)

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("forecast/", forecast_api.ForecastView.as_view(), name="api-forecast"),
    path("forecast/spares/", forecast_api.ForecastSparesView.as_view(), name="api-forecast-spares"),
    path(
        "forecast/snapshots/", forecast_api.ForecastSnapshotListView.as_view(), name="api-forecast-snapshots"
    ),
    path("", include(router.urls)),
]

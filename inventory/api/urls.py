from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from . import retests as retest_views
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
    path("retests/worklist/", retest_views.RetestWorklistView.as_view(), name="retests-worklist"),
    path("retests/sweep/", retest_views.RetestSweepView.as_view(), name="retests-sweep-api"),
    path("", include(router.urls)),
]

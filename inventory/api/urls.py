from csp.decorators import csp_update
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from inventory.api import alerts as alert_views
from inventory.api import forecast as forecast_api
from inventory.api import impact as impact_api
from inventory.api import reconciliation as recon_api
from inventory.api import retests as retest_views
from inventory.api import sync as sync_api
from inventory.api import testing as test_api
from inventory.api import tokens as token_api
from inventory.api import views
from inventory.api.collectives import CollectivesIngestView, JobRegisterView
from inventory.api.telemetry import TelemetryIngestView, TelemetryPipelineView

_DOCS_CSP = csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["'self'", "blob:"]})

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
router.register("tests", test_api.CableTestViewSet, basename="cabletest")
router.register("inspections", test_api.InspectionViewSet, basename="inspection")
router.register("alerts", alert_views.AlertViewSet, basename="alert")
router.register("maintenance-windows", alert_views.MaintenanceWindowViewSet, basename="maintenancewindow")
router.register("tokens", token_api.ApiTokenViewSet, basename="apitoken")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The docs pages load their scripts from files (no inline script: the split Swagger view), but
    # Swagger UI and Redoc style themselves inline and Redoc runs a worker from a blob.
    path("docs/", _DOCS_CSP(SpectacularSwaggerSplitView.as_view(url_name="schema")), name="api-docs"),
    path("redoc/", _DOCS_CSP(SpectacularRedocView.as_view(url_name="schema")), name="api-redoc"),
    path("telemetry/", TelemetryIngestView.as_view(), name="telemetry-ingest"),
    path("jobs/", JobRegisterView.as_view(), name="job-register"),
    path("collectives/", CollectivesIngestView.as_view(), name="collectives-ingest"),
    path("telemetry/pipeline/", TelemetryPipelineView.as_view(), name="telemetry-pipeline"),
    path(
        "reports/commissioning/", test_api.CommissioningReportView.as_view(), name="api-commissioning-report"
    ),
    path("vendor-comparison/", alert_views.VendorComparisonView.as_view(), name="api-vendor-comparison"),
    path("reports/repairs/", alert_views.RepairReportView.as_view(), name="api-repair-report"),
    path("reports/impact/", impact_api.ImpactReportView.as_view(), name="api-impact-report"),
    # Any rack name stored ("/" sent as %2F, an older line break): core.names.
    re_path(
        r"^racks/(?P<name>[\s\S]+)/bringup/$", alert_views.BringupView.as_view(), name="api-rack-bringup"
    ),
    path("topology/<str:fmt>/", alert_views.TopologyExportView.as_view(), name="api-topology-export"),
    path("reconciliation/", recon_api.ReconciliationReportView.as_view(), name="api-reconciliation"),
    path(
        "reconciliation/preview/",
        recon_api.ReconciliationPreviewView.as_view(),
        name="api-reconciliation-preview",
    ),
    path(
        "reconciliation/apply/", recon_api.ReconciliationApplyView.as_view(), name="api-reconciliation-apply"
    ),
    path("retests/worklist/", retest_views.RetestWorklistView.as_view(), name="retests-worklist"),
    path("retests/sweep/", retest_views.RetestSweepView.as_view(), name="retests-sweep-api"),
    path("forecast/", forecast_api.ForecastView.as_view(), name="api-forecast"),
    path("forecast/spares/", forecast_api.ForecastSparesView.as_view(), name="api-forecast-spares"),
    path(
        "forecast/snapshots/", forecast_api.ForecastSnapshotListView.as_view(), name="api-forecast-snapshots"
    ),
    path("sync/conflicts/", sync_api.SyncConflictsView.as_view(), name="api-sync-conflicts"),
    path("", include(router.urls)),
]

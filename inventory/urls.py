from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from inventory.converters import NameConverter
from inventory.views import account, alerts, desk, docs, pages
from inventory.views import forecast as forecast_views
from inventory.views import labels as label_views
from inventory.views import pipeline as pipeline_views
from inventory.views import reconciliation as recon_views
from inventory.views import retests as retest_pages
from inventory.views import sync as sync_views
from inventory.views import testing as test_views

# Rack and device names may hold "/" (NetBox allows it): one path segment each (core.names).
register_converter(NameConverter, "name")

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("docs/", docs.docs_page, name="docs"),
    path("docs/<path:path>", docs.docs_page, name="docs-page"),
    path("", pages.home, name="home"),
    path("search/", pages.search, name="search"),
    # Printed on QR labels: these two URLs never change.
    path("c/<str:label>", pages.cable_page, name="cable-page"),
    path("r/<name:name>", pages.rack_page, name="rack-page"),
    path("racks/", pages.rack_list, name="rack-list"),
    path("favicon.ico", pages.favicon, name="favicon"),
    # Tests (issue 4): phone forms, original files, commissioning report.
    path("c/<str:label>/test/power-meter", test_views.cable_test_olts, name="cable-test-olts"),
    path("c/<str:label>/test/otdr", test_views.cable_test_otdr, name="cable-test-otdr"),
    path("c/<str:label>/inspect", test_views.cable_inspect, name="cable-inspect"),
    path("files/otdr/<int:pk>", test_views.otdr_download, name="otdr-download"),
    path("files/inspection/<int:pk>", test_views.inspection_photo, name="inspection-photo"),
    path("tests/import/", test_views.test_import_page, name="test-import"),
    path("reports/commissioning/", test_views.commissioning_report, name="commissioning-report"),
    path("reports/commissioning.pdf", test_views.commissioning_report_pdf, name="commissioning-report-pdf"),
    # Alerts, maintenance, wiring validation (rules helper)
    path("alerts/", alerts.alert_list, name="alert-list"),
    path("alerts/<int:pk>/", alerts.alert_detail, name="alert-detail"),
    path("alerts/<int:pk>/acknowledge", alerts.alert_acknowledge, name="alert-acknowledge"),
    path("alerts/<int:pk>/silence", alerts.alert_silence, name="alert-silence"),
    path("alerts/<int:pk>/repairs", alerts.alert_repair, name="alert-repair"),
    path("repairs/report/", alerts.repair_report, name="repair-report"),
    path("reports/impact/", alerts.impact_report, name="impact-report"),
    path("alerts/<int:pk>/drain", alerts.alert_drain, name="alert-drain"),
    path("alerts/<int:pk>/restore", alerts.alert_restore, name="alert-restore"),
    path("alerts/<int:pk>/extend", alerts.alert_extend, name="alert-extend"),
    path("maintenance/", alerts.maintenance, name="maintenance"),
    path("vendors/compare/", alerts.vendor_comparison, name="vendor-compare"),
    path("r/<name:name>/bringup", alerts.bringup, name="rack-bringup"),
    path("topology/export.<str:fmt>", alerts.topology_export, name="topology-export"),
    path("metrics", alerts.metrics, name="metrics"),
    path("telemetry/pipeline/", pipeline_views.pipeline, name="telemetry-pipeline"),
    # Telemetry vs the recorded plant; creating the missing module records in one reviewed step.
    path("reconciliation/", recon_views.report, name="reconciliation"),
    # NetBox/Nautobot sync conflicts: take the source's ends, or keep ours.
    path("sync/conflicts/", sync_views.conflicts, name="sync-conflicts"),
    path("sync/conflicts/resolve", sync_views.conflict_resolve, name="sync-conflict-resolve"),
    path("reconciliation/preview", recon_views.preview, name="reconciliation-preview"),
    path("reconciliation/apply", recon_views.apply, name="reconciliation-apply"),
    # Labels: the print form / bulk-action target, and background batches.
    path("labels/print/", label_views.labels_print, name="labels-print"),
    path("labels/batches/<uuid:uid>/", label_views.label_batch, name="label-batch"),
    path("labels/batches/<uuid:uid>/status", label_views.label_batch_status, name="label-batch-status"),
    path("labels/batches/<uuid:uid>/download", label_views.label_batch_download, name="label-batch-download"),
    # Technician actions on the cable page.
    path("c/<str:label>/fault", pages.cable_fault, name="cable-fault"),
    path("c/<str:label>/serviced", pages.cable_serviced, name="cable-serviced"),
    path("c/<str:label>/swap", pages.cable_swap, name="cable-swap"),
    path("c/<str:label>/replace", pages.cable_replace, name="cable-replace"),
    path("c/<str:label>/edit", desk.cable_edit, name="cable-edit"),
    path("c/<str:label>/status", pages.cable_set_status, name="cable-set-status"),
    # The journal of a cable, module, device or rack (kind: cable, module, device, rack).
    path("journal/<str:kind>/<name:key>/add", pages.journal_add, name="journal-add"),
    path("journal/<int:pk>/close", pages.journal_close, name="journal-close"),
    path("t/<int:pk>", pages.transceiver_detail, name="transceiver-detail"),
    # Device and port pages (issue 15): linked from device names everywhere.
    path("d/<name:name>", pages.device_page, name="device-page"),
    path("d/<name:name>/p/<path:port>", pages.port_page, name="port-page"),
    # Desk pages.
    path("cables/", desk.cable_list, name="cable-list"),
    path("cables/new", desk.cable_create, name="cable-create"),
    path("cables/status", desk.cable_bulk_status, name="cable-bulk-status"),
    path("cables/import", desk.cable_plan_import, name="cable-import"),
    path("transceivers/", desk.transceiver_list, name="transceiver-list"),
    path("transceivers/new", desk.transceiver_create, name="transceiver-create"),
    path("t/<int:pk>/edit", desk.transceiver_edit, name="transceiver-edit"),
    # Retests: planning (desk and phone), exports, the on-demand sweep; reminder preferences.
    path("retests/", retest_pages.retests_plan, name="retests-plan"),
    path("retests/worklist.csv", retest_pages.retests_csv, name="retests-csv"),
    path("retests/worklist.pdf", retest_pages.retests_pdf, name="retests-pdf"),
    path("retests/sweep/", retest_pages.retests_sweep_now, name="retests-sweep"),
    path("profile/reminders/", retest_pages.profile, name="reminder-preferences"),
    path("forecast/", forecast_views.forecast_page, name="forecast"),
    path("forecast/spares.csv", forecast_views.spares_csv, name="forecast-spares-csv"),
    # Security: the user's profile and API tokens.
    path("profile/", account.profile, name="profile"),
    path("profile/tokens/<int:pk>/revoke", account.token_revoke, name="token-revoke"),
]

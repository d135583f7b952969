"""Admin for every model people edit, with history. Deleting is not offered: retire instead."""

from django.contrib import admin
from django.utils import timezone
from simple_history.admin import SimpleHistoryAdmin

from inventory import models as m
from inventory.admin.scope import SiteScopedAdmin
from inventory.services.access import tokens as token_services
from inventory.services.plant import cable_sites
from inventory.services.retests.due import retest_due_refresh_on_commit
from inventory.services.testing.latest_table import cable_test_latest_refresh


class NoDeleteAdmin(SiteScopedAdmin, SimpleHistoryAdmin):
    """No deletes; object-level rules (a technician's sites) as on the pages and the API."""

    def has_delete_permission(self, request, obj=None):
        return False


class MovesCablesAdmin(NoDeleteAdmin):
    """A rack, row or room moved under another parent, a device to another rack, a port or cage
    to another device: the cables' site column follows (as the API's ``MovesCablesMixin``)."""

    def save_model(self, request, obj, form, change):
        parent = cable_sites.PARENT_KEYS[type(obj)].removesuffix("_id")
        super().save_model(request, obj, form, change)
        if change and parent in form.changed_data:
            cable_sites.cable_sites_refresh_for_moved(obj)


@admin.register(m.Site)
class SiteAdmin(NoDeleteAdmin):
    list_display = ["name", "slug", "team", "retest_interval_days"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(m.Room)
class RoomAdmin(MovesCablesAdmin):
    list_display = ["name", "site"]
    list_select_related = ["site"]


@admin.register(m.Row)
class RowAdmin(MovesCablesAdmin):
    list_display = ["name", "room", "team"]
    list_select_related = ["room__site", "team"]


@admin.register(m.Rack)
class RackAdmin(MovesCablesAdmin):
    list_display = ["name", "row", "u_height", "team"]
    list_select_related = ["row__room__site", "team"]
    search_fields = ["name"]


@admin.register(m.Team)
class TeamAdmin(NoDeleteAdmin):
    list_display = ["name", "email", "lead"]
    filter_horizontal = ["members"]


@admin.register(m.Vendor)
class VendorAdmin(NoDeleteAdmin):
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


class CageInline(admin.TabularInline):
    model = m.Cage
    extra = 0
    can_delete = False


@admin.register(m.Device)
class DeviceAdmin(MovesCablesAdmin):
    list_display = ["name", "role", "rack", "position_u", "vendor", "model", "serial"]
    list_filter = ["role"]
    list_select_related = ["rack", "vendor"]
    search_fields = ["name", "serial", "asset_tag"]
    raw_id_fields = ["rack"]
    inlines = [CageInline]


class AliasInline(admin.TabularInline):
    model = m.PortAlias
    extra = 0
    can_delete = False
    fields = ["name", "source", "valid_from", "valid_to"]


@admin.register(m.Port)
class PortAdmin(MovesCablesAdmin):
    list_display = [
        "__str__",
        "kind",
        "fabric",
        "cage",
        "connector",
        "lane_start",
        "lane_count",
        "speed_gbps",
    ]
    list_filter = ["kind", "fabric"]
    list_select_related = ["device", "cage__device"]
    search_fields = ["name", "device__name", "aliases__name"]
    raw_id_fields = ["device", "cage"]
    inlines = [AliasInline]


@admin.register(m.PortMapping)
class PortMappingAdmin(NoDeleteAdmin):
    list_display = ["front_port", "rear_port", "rear_position"]
    raw_id_fields = ["front_port", "rear_port"]


@admin.register(m.TransceiverModel)
class TransceiverModelAdmin(NoDeleteAdmin):
    list_display = [
        "part_number",
        "vendor",
        "form_factor",
        "pmd",
        "connector_type",
        "connector_count",
        "polish",
    ]
    list_filter = ["form_factor", "vendor"]


class PlacementInline(admin.TabularInline):
    model = m.TransceiverPlacement
    extra = 0
    can_delete = False
    raw_id_fields = ["cage"]
    readonly_fields = ["cage", "installed_at", "removed_at", "end_reason"]


@admin.register(m.Transceiver)
class TransceiverAdmin(NoDeleteAdmin):
    list_display = ["serial", "model", "status", "cage", "date_code"]
    list_filter = ["status", "model__vendor"]
    list_select_related = ["model__vendor", "cage__device"]
    search_fields = ["serial"]
    raw_id_fields = ["cage"]
    readonly_fields = ["cage", "status"]  # moves go through the install/swap services
    inlines = [PlacementInline]


@admin.register(m.RmaCase)
class RmaCaseAdmin(NoDeleteAdmin):
    list_display = ["__str__", "transceiver", "cable", "opened_at", "closed_at", "outcome"]
    raw_id_fields = ["transceiver", "cable"]


class CableEndInline(admin.TabularInline):
    model = m.CableEnd
    extra = 0
    can_delete = False
    raw_id_fields = ["cage", "port"]


@admin.register(m.Cable)
class CableAdmin(NoDeleteAdmin):
    list_display = ["label", "kind", "role", "status", "length_m", "vendor", "install_date", "retest_due"]
    list_filter = ["status", "kind", "role"]
    list_select_related = ["vendor"]
    search_fields = ["label", "serial_a", "serial_b"]
    raw_id_fields = ["replaced_by"]
    readonly_fields = ["retired_at"]
    inlines = [CableEndInline]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        cable_sites.cable_sites_refresh(cable_ids=[form.instance.pk])  # its ends may have moved
        # The ends' connectors and fibre counts decide how many fibres an OLTS must cover; here
        # is the one place they change once a cable is tested (CableTestLatest.fibres_in_use).
        cable_test_latest_refresh(cable_ids=[form.instance.pk])


@admin.register(m.Link)
class LinkAdmin(NoDeleteAdmin):
    list_display = ["__str__", "pmd", "fec", "speed_gbps", "path_ok", "retest_due", "active"]
    list_filter = ["active", "path_ok", "pmd"]
    raw_id_fields = ["a_port", "b_port"]


@admin.register(m.CableTest)
class CableTestAdmin(NoDeleteAdmin):
    list_display = ["cable", "kind", "tested_at", "verdict", "loss_db", "margin_db", "is_baseline"]
    list_filter = ["kind", "verdict"]
    raw_id_fields = ["cable", "link"]

    def save_model(self, request, obj, form, change):
        # A test added or corrected here (its date, verdict, even its cable) moves the latest
        # tests and the retest due date of the cable it was on and of the one it is on now, as
        # the services that record tests move them.
        before = m.CableTest.objects.filter(pk=obj.pk).values_list("cable_id", flat=True).first()
        super().save_model(request, obj, form, change)
        cables = sorted({obj.cable_id, before} - {None})
        cable_test_latest_refresh(cable_ids=cables)
        for cable_id in cables:
            retest_due_refresh_on_commit(
                cable_id=cable_id, now=timezone.now(), reason=f"{obj.kind} test edited in the admin"
            )


@admin.register(m.Alert)
class AlertAdmin(SiteScopedAdmin, admin.ModelAdmin):
    list_display = ["rule", "severity", "state", "link", "opened_at", "resolved_at", "silenced"]
    list_filter = ["rule", "severity", "state"]
    raw_id_fields = ["link", "port", "cable"]


@admin.register(m.MaintenanceWindow)
class MaintenanceWindowAdmin(SiteScopedAdmin, admin.ModelAdmin):
    list_display = ["reason", "starts_at", "ends_at"]
    raw_id_fields = ["links", "devices", "racks"]


@admin.action(description="Revoke the selected tokens", permissions=["change"])
def revoke_tokens(modeladmin, request, queryset):
    for token in queryset.filter(revoked_at__isnull=True):
        token_services.api_token_revoke(token=token)


@admin.register(m.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are immutable but for their name and their revocation (the action above, one way
    only): nobody moves a token to another user, raises its kind, extends it or un-revokes it
    here. New tokens come from their owner's profile, ``manage.py api_token`` or
    ``POST /api/tokens/`` (shown once)."""

    list_display = [
        "name",
        "user",
        "kind",
        "prefix",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    fields = ["name", "user", "kind", "prefix", "created_at", "expires_at", "revoked_at", "last_used_at"]
    readonly_fields = ["user", "kind", "prefix", "created_at", "expires_at", "revoked_at", "last_used_at"]
    actions = [revoke_tokens]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(m.SyncRun)
class SyncRunAdmin(admin.ModelAdmin):
    list_display = ["source", "site", "dry_run", "started_at", "finished_at", "error"]
    readonly_fields = [
        "source",
        "site",
        "dry_run",
        "started_at",
        "finished_at",
        "summary",
        "conflicts",
        "error",
    ]


@admin.register(m.InstrumentMapping)
class InstrumentMappingAdmin(admin.ModelAdmin):
    list_display = ["instrument", "updated_at"]
    search_fields = ["instrument"]


@admin.register(m.GpuNicMap)
class GpuNicMapAdmin(admin.ModelAdmin):
    """Each server model's GPU-to-NIC map (data, not code): which NIC port and rail serve GPU k."""

    list_display = ("device_model", "gpu", "port_name", "rail")
    list_filter = ("device_model",)
    ordering = ("device_model", "gpu")

"""Admin for retest policies, triggers, reminder digests (with their errors) and profiles."""

from django.contrib import admin, messages
from django.utils import timezone

from inventory import models as m
from inventory.admin.scope import SiteScopedAdmin
from inventory.core.choices import DigestStatus
from inventory.services.ops.enqueue import enqueue_on_commit
from inventory.services.retests import reminders as reminder_services


@admin.action(description="Run the retest sweep now")
def run_sweep(modeladmin, request, queryset):
    reminder_services.retests_sweep_request()
    modeladmin.message_user(request, "Retest sweep queued.", messages.SUCCESS)


@admin.register(m.RetestPolicy)
class RetestPolicyAdmin(SiteScopedAdmin, admin.ModelAdmin):
    list_display = [
        "__str__",
        "site",
        "kind",
        "link_class",
        "interval_days",
        "shorten_days",
        "accept_telemetry",
    ]
    list_select_related = ["site"]
    actions = [run_sweep]


@admin.register(m.RetestTrigger)
class RetestTriggerAdmin(SiteScopedAdmin, admin.ModelAdmin):
    list_display = ["cable", "reason", "occurred_at", "created_by", "note"]
    list_filter = ["reason"]
    list_select_related = ["cable", "created_by"]
    raw_id_fields = ["cable"]
    search_fields = ["cable__label"]


class ReminderInline(admin.TabularInline):
    model = m.RetestReminder
    extra = 0
    can_delete = False
    fields = ["cable", "due_date", "kind", "claimed_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.action(description="Send again (failed digests only, same Message-ID)")
def resend(modeladmin, request, queryset):
    now = timezone.now()
    n = 0
    for pk in queryset.filter(status=DigestStatus.FAILED).values_list("pk", flat=True):
        if reminder_services.digest_resend(digest_id=pk, now=now):
            enqueue_on_commit("inventory.reminder_digest_send", pk)
            n += 1
    modeladmin.message_user(request, f"{n} digest(s) queued again.", messages.SUCCESS)


@admin.register(m.ReminderDigest)
class ReminderDigestAdmin(admin.ModelAdmin):
    list_display = ["recipient", "status", "subject", "attempts", "send_after", "sent_at", "last_error"]
    list_filter = ["status"]
    search_fields = ["recipient", "message_id"]
    readonly_fields = [f.name for f in m.ReminderDigest._meta.fields]
    inlines = [ReminderInline]
    actions = [resend, run_sweep]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(m.RetestSweepRun)
class RetestSweepRunAdmin(admin.ModelAdmin):
    list_display = ["day", "started_at", "finished_at", "cables_changed", "reminders_claimed"]
    readonly_fields = ["day", "started_at", "finished_at", "cables_changed", "reminders_claimed"]
    actions = [run_sweep]


@admin.register(m.UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "reminder_mode", "digest_weekday", "digest_hour"]
    list_select_related = ["user"]

"""HTML forms: they check the shape of the input; the services decide what is allowed.

A service's ``ValidationError`` comes back keyed by its own argument names; ``apply_errors``
puts each message next to the field the technician typed it in.
"""

from __future__ import annotations

from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_datetime

from inventory.core.choices import (
    MANUAL_CABLE_STATUSES,
    CableKind,
    CableStatus,
    ConnectorType,
    FieldNoteKind,
    Polarity,
    Polish,
    RepairEnd,
)
from inventory.core.validators import LABEL_RE, LABEL_RULE, end_fibre_count_problem
from inventory.core.words import alerts_named
from inventory.models import Cable, Port, Site, Transceiver, TransceiverModel, Vendor
from inventory.selectors.plant.ports import ports_resolve
from inventory.services import journal

BOOL_CHOICES = [("", "unknown"), ("true", "pinned (male)"), ("false", "unpinned (female)")]


def apply_errors(form: forms.Form, exc: ValidationError, field_map: dict[str, str] | None = None) -> None:
    """Attach a service's errors to the form's fields (unknown keys go to the top of the form)."""
    field_map = field_map or {}
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for key, errors in exc.error_dict.items():
        target = field_map.get(key, key)
        if target not in form.fields:
            target = None
        for err in errors:
            form.add_error(target, err.message % err.params if err.params else err.message)


class VersionField(forms.CharField):
    """The ``updated_at`` the editor loaded, round-tripped through a hidden input."""

    widget = forms.HiddenInput

    def to_python(self, value):
        value = super().to_python(value)
        if not value:
            return None
        try:  # parse_datetime raises on a well-formed impossible time (2026-13-45)
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        if parsed is None:
            raise ValidationError("The form is damaged; reload the page.")
        return parsed

    def prepare_value(self, value):
        return value.isoformat() if isinstance(value, datetime) else value


# --- phone actions ------------------------------------------------------------------------


class FaultForm(forms.Form):
    seen = forms.CharField(
        label="What did you see?",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "e.g. link light off, jacket crushed at U12"}),
        max_length=2000,
        error_messages={
            "required": "Say what you saw (a light off, a crushed jacket, where): it goes on the record."
        },
    )
    status = forms.ChoiceField(
        label="The cable is",
        choices=[
            (CableStatus.DEGRADED, "Degraded: still carries traffic"),
            (CableStatus.FAULTY, "Faulty: does not work"),
        ],
        widget=forms.RadioSelect,
        initial=CableStatus.DEGRADED,
    )


class InstalledForm(forms.Form):
    """The cable page's "Mark installed": the day it went in (today when left out)."""

    install_date = forms.DateField(label="Installed on", required=False)


class ServicedForm(forms.Form):
    kind = forms.ChoiceField(
        label="What did you do?",
        choices=[
            (FieldNoteKind.RESEATED_CLEANED, "Cleaned and re-seated"),
            (FieldNoteKind.CLEANED, "Cleaned only"),
            (FieldNoteKind.RESEATED, "Re-seated only"),
        ],
        widget=forms.RadioSelect,
        initial=FieldNoteKind.RESEATED_CLEANED,
    )
    text = forms.CharField(
        label="Notes (optional)",
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    end = forms.ChoiceField(
        label="Which end?",
        choices=RepairEnd.choices,
        widget=forms.RadioSelect,
        initial=RepairEnd.NA,
        required=False,
    )

    def __init__(self, *args, alerts=(), **kwargs):
        """``alerts``: the open alerts a re-seat or cleaning here is recorded against too
        (``cable_service_alerts``); the end is asked only then, as the alert's repair form asks it."""
        super().__init__(*args, **kwargs)
        if not alerts:
            del self.fields["end"]
        else:
            self.fields["end"].label = f"Which end? (recorded on {alerts_named(a.pk for a in alerts)} too)"


class JournalForm(forms.Form):
    """A journal entry on a cable, module, device or rack."""

    kind = forms.ChoiceField(
        label="What is it?",
        choices=[
            (FieldNoteKind.NOTE, "A note (stays at the top until closed)"),
            (FieldNoteKind.FAULT, "A fault seen (stays at the top until closed)"),
            (FieldNoteKind.SERVICE, "Work done (goes straight to the history)"),
        ],
        widget=forms.RadioSelect,
        initial=FieldNoteKind.NOTE,
    )
    text = forms.CharField(
        label="Text",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"required": journal.TEXT_REQUIRED},
    )


class SwapForm(forms.Form):
    cage = forms.TypedChoiceField(
        label="Which end?",
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": "Choose the end whose module you swapped."},
    )
    new_serial = forms.CharField(
        label="New module serial",
        max_length=100,
        error_messages={"required": "Type or scan the new module's serial (on its label)."},
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "characters", "spellcheck": "false"}
        ),
    )
    old_to = forms.ChoiceField(
        label="The old module goes to",
        choices=[("spare", "Spares (it works)"), ("failed", "Failed (keep for RMA)")],
        widget=forms.RadioSelect,
        initial="failed",
    )
    notes = forms.CharField(label="Notes (optional)", required=False, max_length=2000)

    def __init__(self, *args, ends=(), **kwargs):
        super().__init__(*args, **kwargs)
        choices = []
        for v in ends:
            if not v.module_cage:
                continue
            held = (
                f"{v.transceiver.model.part_number} s/n {v.transceiver.serial}" if v.transceiver else "empty"
            )
            choices.append((v.end.cage_id, f"{v.name}: {v.device.name} {v.where} ({held})"))
        self.fields["cage"].choices = choices
        if len(choices) == 1:
            self.fields["cage"].initial = choices[0][0]

    def clean_new_serial(self):
        serial = self.cleaned_data["new_serial"].strip()
        matches = list(
            Transceiver.objects.filter(serial__iexact=serial).select_related("model__vendor", "cage__device")[
                :3
            ]
        )
        if not matches:
            raise ValidationError(
                f"No module with serial {serial} is recorded. Check the label, or add it on the desk first."
            )
        if len(matches) > 1:
            raise ValidationError(
                f"Serial {serial} belongs to several modules ("
                + ", ".join(f"{m.model.vendor} {m.model.part_number}" for m in matches)
                + "); ask an engineer to swap it from the desk."
            )
        return matches[0]


class ReplaceForm(forms.Form):
    new_label = forms.CharField(
        label="Label of the new cable",
        max_length=64,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}),
    )
    reason = forms.CharField(label="Why (optional)", required=False, max_length=200)

    def clean_new_label(self):
        label = self.cleaned_data["new_label"].strip()
        if not LABEL_RE.fullmatch(label):
            raise ValidationError(LABEL_RULE)
        if Cable.objects.filter(label=label).exists():
            raise ValidationError(
                f"Label {label} is already on another cable; use the label of the new cable."
            )
        return label


# --- desk forms ---------------------------------------------------------------------------


class EndFields:
    """Builds the fields of one cable end (prefix ``a_`` or ``b_``)."""

    @staticmethod
    def make(side: str) -> dict[str, forms.Field]:
        title = side.upper()
        return {
            f"{side}_device": forms.CharField(label=f"{title} end device", max_length=100),
            f"{side}_port": forms.CharField(label=f"{title} end port (name or alias)", max_length=128),
            f"{side}_connector_type": forms.ChoiceField(
                label=f"{title} plug", choices=[("", "from the port")] + ConnectorType.choices, required=False
            ),
            f"{side}_fibre_count": forms.TypedChoiceField(
                label=f"{title} fibres",
                choices=[("", "-"), (2, "2 (duplex)"), (8, "8"), (12, "12"), (16, "16"), (24, "24")],
                coerce=int,
                empty_value=None,
                required=False,
            ),
            f"{side}_polish": forms.ChoiceField(
                label=f"{title} polish", choices=Polish.choices, required=False
            ),
            f"{side}_pinned": forms.TypedChoiceField(
                label=f"{title} MPO pins",
                choices=BOOL_CHOICES,
                coerce=lambda v: v == "true",
                empty_value=None,
                required=False,
            ),
        }


class CableDescriptionMixin(forms.Form):
    polarity = forms.ChoiceField(choices=Polarity.choices, required=False)
    length_m = forms.DecimalField(
        label="Length (m)", max_digits=7, decimal_places=2, min_value=0.01, required=False
    )
    vendor = forms.ModelChoiceField(queryset=Vendor.objects.order_by("name"), required=False)
    part_number = forms.CharField(max_length=100, required=False)
    serial_a = forms.CharField(label="EEPROM serial, A end", max_length=100, required=False)
    serial_b = forms.CharField(label="EEPROM serial, B end", max_length=100, required=False)
    lot = forms.CharField(max_length=40, required=False)
    install_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class CableCreateForm(CableDescriptionMixin):
    label = forms.CharField(max_length=64)
    kind = forms.ChoiceField(choices=CableKind.choices)

    field_order = ["label", "kind", "length_m", "polarity"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for side in ("a", "b"):
            self.fields.update(EndFields.make(side))

    def clean_label(self):
        label = self.cleaned_data["label"].strip()
        if not LABEL_RE.fullmatch(label):
            raise ValidationError(LABEL_RULE)
        return label

    def clean(self):
        data = super().clean()
        for side in ("a", "b"):  # one B end here: no breakout legs
            problem = end_fibre_count_problem(
                connector_type=data.get(f"{side}_connector_type") or "",
                fibre_count=data.get(f"{side}_fibre_count"),
            )
            if problem:
                self.add_error(f"{side}_fibre_count", problem)
        pairs = {}
        for side in ("a", "b"):
            dev, name = (data.get(f"{side}_device") or "").strip(), (data.get(f"{side}_port") or "").strip()
            if dev and name:
                pairs[side] = (dev, name)
        resolved = ports_resolve(pairs.values())
        ports = {
            p.pk: p
            for p in Port.objects.filter(pk__in=resolved.values()).select_related(
                "device__rack", "cage__transceiver__model"
            )
        }
        for side, (dev, name) in pairs.items():
            port = ports.get(resolved.get((dev, name)))
            if port is None:
                port = (
                    Port.objects.filter(device__name=dev, name=name, retired_at__isnull=True)
                    .select_related("device__rack", "cage__transceiver__model")
                    .first()
                )
            if port is None:
                exists = Port.objects.filter(device__name=dev).exists()
                self.add_error(
                    f"{side}_port",
                    f"{dev} has no port called {name}." if exists else f"There is no device called {dev}.",
                )
            else:
                data[f"{side}_port_obj"] = port
        return data


class CableEditForm(CableDescriptionMixin):
    version = VersionField()


class TransceiverCreateForm(forms.Form):
    model = forms.ModelChoiceField(
        label="Part",
        queryset=TransceiverModel.objects.select_related("vendor").order_by("vendor__name", "part_number"),
    )
    serial = forms.CharField(max_length=100)
    firmware = forms.CharField(max_length=50, required=False)
    date_code = forms.CharField(max_length=20, required=False)
    stock_site = forms.ModelChoiceField(
        label="Kept at", queryset=Site.objects.order_by("name"), required=False
    )
    acquired_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


class TransceiverEditForm(forms.Form):
    serial = forms.CharField(max_length=100)
    firmware = forms.CharField(max_length=50, required=False)
    date_code = forms.CharField(max_length=20, required=False)
    stock_site = forms.ModelChoiceField(
        label="Kept at", queryset=Site.objects.order_by("name"), required=False
    )
    acquired_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    version = VersionField()


class BulkStatusForm(forms.Form):
    # ``cable`` is also what the label printer's form takes, so one ticked list serves both.
    cable = forms.ModelMultipleChoiceField(
        queryset=Cable.objects.all(),
        error_messages={"required": "Tick the cables to change first."},
    )
    # The states a person sets, as the API's status action: ``tested``/``in_production`` come
    # only from the test gate.
    status = forms.ChoiceField(
        choices=[("", "Set status…")] + [(s.value, s.label) for s in MANUAL_CABLE_STATUSES]
    )
    reason = forms.CharField(required=False, max_length=100)


class CablePlanForm(forms.Form):
    file = forms.FileField(label="Cable plan (CSV)")

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > 10 * 1024 * 1024:
            raise ValidationError("The file is over 10 MB; split the plan.")
        try:
            return f.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValidationError(
                "The file is not UTF-8 text; save it from the spreadsheet as CSV UTF-8."
            ) from exc

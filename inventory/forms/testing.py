"""Phone-first forms for recording tests. They validate input shape only; services decide."""

from __future__ import annotations

from django import forms

from inventory.core.choices import Direction, ReferenceMethod

WAVELENGTH_CHOICES = [(w, f"{w} nm") for w in (1310, 1550, 850, 1300, 953, 1625)]


class OltsForm(forms.Form):
    """One wavelength, one direction, a loss per fibre: a few taps on a phone."""

    wavelength_nm = forms.TypedChoiceField(choices=WAVELENGTH_CHOICES, coerce=int, label="Wavelength")
    direction = forms.ChoiceField(choices=Direction.choices, initial=Direction.A_TO_B)
    reference_method = forms.ChoiceField(
        choices=ReferenceMethod.choices, initial=ReferenceMethod.ONE_JUMPER, label="Reference method"
    )
    launch_condition = forms.CharField(
        required=False, max_length=40, label="Launch condition (multi-mode)", help_text="e.g. encircled flux"
    )
    instrument = forms.CharField(required=False, max_length=100)
    instrument_serial = forms.CharField(required=False, max_length=64, label="Instrument serial")
    calibration_date = forms.DateField(
        required=False, label="Calibration date", widget=forms.DateInput(attrs={"type": "date"})
    )
    reference_dbm = forms.FloatField(
        required=False,
        label="Reference power (dBm)",
        widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}),
    )
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, fibres: int = 8, **kwargs):
        super().__init__(*args, **kwargs)
        self.fibre_count = fibres
        for i in range(1, fibres + 1):
            self.fields[f"loss_{i}"] = forms.FloatField(
                required=False,
                label=f"Fibre {i} loss (dB)",
                widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}),
            )

    def fibre_fields(self):
        return [self[f"loss_{i}"] for i in range(1, self.fibre_count + 1)]

    def clean(self):
        data = super().clean()
        if not any(data.get(f"loss_{i}") is not None for i in range(1, self.fibre_count + 1)):
            raise forms.ValidationError("Enter the loss of at least one fibre.")
        return data


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".sor,.SOR,application/octet-stream"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class OtdrForm(forms.Form):
    files = MultipleFileField(label="OTDR .sor file(s)")
    fibre = forms.IntegerField(min_value=1, max_value=144, initial=1, label="Fibre number")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


ZONE_CHOICES = [("", "not checked"), ("pass", "pass"), ("fail", "fail")]


class InspectionForm(forms.Form):
    end = forms.ChoiceField(label="Connector end")
    passed = forms.TypedChoiceField(
        choices=[("1", "Pass"), ("0", "Fail")],
        coerce=lambda v: v == "1",
        widget=forms.RadioSelect,
        label="Result",
    )
    zone_core = forms.ChoiceField(choices=ZONE_CHOICES, required=False, label="Core zone")
    zone_cladding = forms.ChoiceField(choices=ZONE_CHOICES, required=False, label="Cladding zone")
    zone_adhesive = forms.ChoiceField(choices=ZONE_CHOICES, required=False, label="Adhesive zone")
    zone_contact = forms.ChoiceField(choices=ZONE_CHOICES, required=False, label="Contact zone")
    cleaned = forms.BooleanField(required=False, label="Cleaned before inspection")
    photo = forms.FileField(
        required=False, widget=forms.ClearableFileInput(attrs={"accept": "image/*", "capture": "environment"})
    )

    def __init__(self, *args, ends=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["end"].choices = [(str(e.pk), label) for e, label in ends]

    def zones(self) -> dict:
        return {
            z: self.cleaned_data[f"zone_{z}"]
            for z in ("core", "cladding", "adhesive", "contact")
            if self.cleaned_data.get(f"zone_{z}")
        }

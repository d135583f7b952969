"""Phone-first forms for recording tests. They validate input shape only; services decide."""

from __future__ import annotations

from django import forms

from inventory.core.choices import Direction, ReferenceMethod
from inventory.core.words import and_list

WAVELENGTH_CHOICES = [(w, f"{w} nm") for w in (1310, 1550, 850, 1300, 953, 1625)]


class OltsForm(forms.Form):
    """One wavelength, one direction, a loss per fibre: a few taps on a phone. The fibres come
    first; the instrument's details (folded on the page) start as the technician last used them.
    A multi-mode launch condition is asked only of a multi-mode cable; the wavelengths offered
    are those of its medium."""

    wavelength_nm = forms.TypedChoiceField(
        choices=WAVELENGTH_CHOICES, coerce=int, label="Wavelength", widget=forms.RadioSelect
    )
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

    META = (
        "instrument",
        "instrument_serial",
        "calibration_date",
        "reference_method",
        "reference_dbm",
        "launch_condition",
        "notes",
    )

    def __init__(self, *args, fibres: int = 8, wavelengths=None, multimode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.fibre_count = fibres
        if wavelengths:
            self.fields["wavelength_nm"].choices = [(w, f"{w} nm") for w in wavelengths]
            self.fields["wavelength_nm"].initial = wavelengths[0]
        if not multimode:
            del self.fields["launch_condition"]  # no launch condition on single-mode fibre
        for i in range(1, fibres + 1):
            self.fields[f"loss_{i}"] = forms.FloatField(
                required=False,
                label=f"Fibre {i} loss (dB)",
                widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}),
            )

    def fibre_fields(self):
        return [self[f"loss_{i}"] for i in range(1, self.fibre_count + 1)]

    def meta_fields(self):
        return [self[name] for name in self.META if name in self.fields]

    def clean(self):
        """Every fibre in use, or nothing is recorded: the production gate and the retest clock
        read the latest session whole, so a session of some fibres would restart the 90 days
        while the gate still says "only 1 pass"."""
        data = super().clean()
        blank = [i for i in range(1, self.fibre_count + 1) if data.get(f"loss_{i}") is None]
        for i in blank:
            if f"loss_{i}" not in self.errors:  # a number that did not parse says so itself
                self.add_error(f"loss_{i}", "Enter this fibre's loss.")
        if blank:
            raise forms.ValidationError(
                f"Fibre {_numbers(blank)} {'has' if len(blank) == 1 else 'have'} no loss: a power-meter "
                f"test counts only with all {self.fibre_count} fibres measured. Nothing was recorded."
            )
        data.setdefault("launch_condition", "")
        return data


def _numbers(fibres: list[int]) -> str:
    """``2``, ``2 and 5``, ``2-8``, ``1, 3 and 5-8``: runs of fibre numbers as a technician reads them."""
    runs: list[list[int]] = []
    for i in fibres:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    words = [f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs]
    return and_list(words)


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
RESULT_CHOICES = [("pass", "Pass"), ("fail", "Fail"), ("", "Skip")]
ZONES = ("core", "cladding", "adhesive", "contact")


class InspectionForm(forms.Form):
    """Every end of the cable on one screen: for each, Pass / Fail / Skip (not inspected) as big choices,
    "cleaned", and (folded) the IEC zones and a photo. One submission for both ends."""

    def __init__(self, *args, ends=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.ends = list(ends)  # (CableEnd, its words)
        for end, _ in self.ends:
            p = f"e{end.pk}_"
            self.fields[p + "result"] = forms.ChoiceField(
                choices=RESULT_CHOICES, required=False, widget=forms.RadioSelect, label="Result", initial=""
            )
            self.fields[p + "cleaned"] = forms.BooleanField(required=False, label="Cleaned before inspection")
            for z in ZONES:
                self.fields[f"{p}zone_{z}"] = forms.ChoiceField(
                    choices=ZONE_CHOICES, required=False, label=f"{z.capitalize()} zone"
                )
            self.fields[p + "photo"] = forms.FileField(
                required=False,
                label="Photo",
                widget=forms.ClearableFileInput(attrs={"accept": "image/*", "capture": "environment"}),
            )

    def end_groups(self) -> list[dict]:
        """Per end: its words and its bound fields, for the template."""
        out = []
        for end, words in self.ends:
            p = f"e{end.pk}_"
            out.append(
                {
                    "end": end,
                    "name": f"{end.side}{end.leg or ''}",
                    "words": words,
                    "result": self[p + "result"],
                    "cleaned": self[p + "cleaned"],
                    "zones": [self[f"{p}zone_{z}"] for z in ZONES],
                    "photo": self[p + "photo"],
                }
            )
        return out

    def clean(self):
        data = super().clean()
        if not any(data.get(f"e{end.pk}_result") for end, _ in self.ends):
            raise forms.ValidationError("Choose pass or fail for at least one end.")
        return data

    def inspected(self) -> list[dict]:
        """The ends given a result: end, passed, zones, cleaned, photo (an uploaded file or None)."""
        out = []
        for end, _ in self.ends:
            p = f"e{end.pk}_"
            result = self.cleaned_data.get(p + "result")
            if not result:
                continue
            out.append(
                {
                    "end": end,
                    "passed": result == "pass",
                    "zones": {
                        z: self.cleaned_data[f"{p}zone_{z}"]
                        for z in ZONES
                        if self.cleaned_data.get(f"{p}zone_{z}")
                    },
                    "cleaned": self.cleaned_data.get(p + "cleaned", False),
                    "photo": self.cleaned_data.get(p + "photo"),
                }
            )
        return out

"""The 'is my machine in the phase?' form."""

from __future__ import annotations

from django import forms

from packages.domain import apt_phasing
from packages.models import Release


class MachineForm(forms.Form):
    machine_id = forms.CharField(
        label="Machine id",
        max_length=apt_phasing.MACHINE_ID_MAX_LENGTH + 2,  # and a pasted line end
        strip=False,  # apt strips nothing but the line end: neither may we
        help_text="The first line of /etc/machine-id, or the APT::Machine-ID you set, "
        "exactly: apt uses it as it is.",
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "spellcheck": "false",
                "autocapitalize": "off",
                "placeholder": "for example 4c4c4544004a4d1080345ac04f565232",
                "size": 36,
            }
        ),
    )
    release = forms.ModelChoiceField(
        queryset=Release.objects.filter(supported=True),
        to_field_name="codename",
        required=False,
        empty_label="All releases",
    )

    def clean_machine_id(self) -> str:
        try:
            return apt_phasing.machine_id_for_apt(self.cleaned_data["machine_id"])
        except ValueError as error:
            raise forms.ValidationError(str(error), code="machine_id") from error

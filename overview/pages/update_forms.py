"""The forms of the update page: one per action, each with its required reason, and the
second archive admin's answer to a change waiting for sign-off."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms

from packages.admin.forms import ReasonForm, ScheduledPercentageForm, ScheduledReasonForm
from packages.services.person_actions import HALT


@dataclass(frozen=True)
class ActionSpec:
    name: str
    title: str
    explanation: str
    form_class: type[ReasonForm]
    verb: str


ACTION_SPECS: dict[str, ActionSpec] = {
    spec.name: spec
    for spec in (
        ActionSpec(
            "pause",
            "Pause",
            "Keeps its percentage; it does not advance until a person resumes it.",
            ScheduledReasonForm,
            "Paused",
        ),
        ActionSpec(
            "resume",
            "Resume",
            "A paused update resumes at its percentage; a halted one restarts at the policy's "
            "first step. A problem no triager has overridden halts it again at the next tick.",
            ScheduledReasonForm,
            "Resumed",
        ),
        ActionSpec(
            HALT,
            "Halt",
            "Pulls it to 0% now; it stays halted until a person resumes it. About 1 machine in "
            "100 still takes an update at 0%: pull a real regression from the archive too.",
            ReasonForm,
            "Halted at 0%",
        ),
        ActionSpec(
            "set",
            "Set percentage",
            "Sets the phased-update percentage (0 to 100). On a halted update this is a "
            "decision to go on phasing from there.",
            ScheduledPercentageForm,
            "Percentage set",
        ),
        ActionSpec(
            "release",
            "Release to everyone",
            "Straight to 100% for every machine, for an urgent fix.",
            ScheduledReasonForm,
            "Released to everyone",
        ),
    )
}


def action_form(name: str, data: object = None) -> ReasonForm:
    """The form of one action, its fields' ids prefixed by the action (several on a page)."""
    spec = ACTION_SPECS[name]
    return spec.form_class(data, prefix=name)  # type: ignore[arg-type]


class SignOffForm(forms.Form):
    DECISIONS = (("approve", "Approve"), ("refuse", "Refuse"), ("cancel", "Cancel"))

    decision = forms.ChoiceField(choices=DECISIONS)
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=2000,
        help_text="Kept with the change and shown in the update's history.",
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Say why.")
        return reason

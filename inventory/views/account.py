"""The user's profile: who they are, their role, and their API tokens."""

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from inventory.access import authz
from inventory.access.authz import allow_any_user_write
from inventory.core.choices import TokenKind
from inventory.models import ApiToken
from inventory.services.access import tokens as token_services


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. 'collector leaf-01'.")
    kind = forms.ChoiceField(choices=TokenKind.choices, initial=TokenKind.FULL)
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, help_text="Leave empty for no expiry."
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        allowed = authz.token_kinds_for(user)  # no full token for a role that cannot write
        self.fields["kind"].choices = [c for c in TokenKind.choices if c[0] in allowed]
        self.fields["kind"].initial = allowed[0] if allowed else None


def _page(request, form, raw_token=None, status=200):
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at")
    groups = list(request.user.groups.values_list("name", flat=True))
    ctx = {"form": form, "tokens": tokens, "raw_token": raw_token, "roles": groups, "now": timezone.now()}
    return render(request, "inventory/profile.html", ctx, status=status)


@never_cache
@allow_any_user_write
@require_http_methods(["GET", "POST"])
def profile(request):
    if request.method != "POST":
        return _page(request, TokenForm(user=request.user))
    form = TokenForm(request.POST, user=request.user)
    if not form.is_valid():
        return _page(request, form, status=400)
    days = form.cleaned_data["expires_in_days"]
    expires = timezone.now() + timedelta(days=days) if days else None
    try:
        _, raw = token_services.api_token_create(
            user=request.user,
            name=form.cleaned_data["name"],
            kind=form.cleaned_data["kind"],
            expires_at=expires,
        )
    except ValidationError as exc:
        for field, errs in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errs)
        return _page(request, form, status=400)
    # Shown once, in this response only (never stored, never cached).
    return _page(request, TokenForm(user=request.user), raw_token=raw, status=201)


@allow_any_user_write
@require_POST
def token_revoke(request, pk: int):
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token_services.api_token_revoke(token=token)
    messages.success(request, f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect("profile")

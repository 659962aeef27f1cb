"""The account pages: sign-up (open, by invite code or closed: ``LEADERBOARD_SIGNUP``), the profile with the API
token's prefix and a button that makes a new token (shown in full on that answer only: the site keeps its digest),
and Django's own password change and reset views on the site's templates.

Sign-up and password-reset requests are counted per client address (``leaderboard.security.attempt_allowed``);
failed logins per (username, address) and per address, and a locked login says until when (HTTP 429). With the
shared counters (Redis) down, sign-up answers 503 rather than let accounts through uncounted. Tokens are only
ever shown to their owner.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from leaderboard.accounts.forms import LoginForm
from leaderboard.accounts.selectors import api_token_of
from leaderboard.accounts.services import api_token_issue, participant_sign_up
from leaderboard.errors import UsernameTaken
from leaderboard.screening.services import request_trace
from leaderboard.security import LimiterUnavailable, attempt_allowed, request_locked_until, retry_after_seconds
from leaderboard.web.forms import SignUpForm

LOGIN_BACKEND = "leaderboard.security.ThrottledModelBackend"
TOO_MANY = "Too many requests from your address; try again later."
UNAVAILABLE = "Sign-up is unavailable for a moment (its rate limiter cannot be reached); try again in a few minutes."


class LoginView(auth_views.LoginView):
    """Django's login view on the site's template; a locked login answers 429 with a Retry-After header and
    says until when."""

    template_name = "web/login.html"
    form_class = LoginForm
    next_page = "web:competition-list"

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        until = request_locked_until(self.request)
        if until is not None and form.has_error("__all__", "locked"):
            response.status_code = 429
            response["Retry-After"] = str(retry_after_seconds(until))
        return response


login_page = LoginView.as_view()


def _invite_code() -> str | None:
    return settings.LEADERBOARD_INVITE_CODE if settings.LEADERBOARD_SIGNUP == "invite" else None


def _next_url(request: HttpRequest) -> str:
    """Where to go after signing up: a ``next`` on this site, else the profile (where the token is)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("web:profile")


@sensitive_post_parameters("password1", "password2", "invite_code")
@never_cache
def sign_up(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web:profile")
    mode = settings.LEADERBOARD_SIGNUP
    context: dict[str, Any] = {"mode": mode, "next": request.POST.get("next") or request.GET.get("next") or ""}
    if mode == "closed":
        return render(request, "web/signup.html", context, status=403)
    status = 200
    if request.method == "POST":
        try:
            allowed = attempt_allowed(request, scope="signup", fail_closed=True)
        except LimiterUnavailable:
            context.update(form=SignUpForm(invite_code=_invite_code()), error=UNAVAILABLE)
            response = render(request, "web/signup.html", context, status=503)
            response["Retry-After"] = "60"
            return response
        if not allowed:
            context.update(form=SignUpForm(invite_code=_invite_code()), error=TOO_MANY)
            return render(request, "web/signup.html", context, status=429)
        form = SignUpForm(request.POST, invite_code=_invite_code())
        if form.is_valid():
            try:
                user = participant_sign_up(
                    username=form.cleaned_data["username"],
                    email=form.cleaned_data["email"],
                    password=form.cleaned_data["password1"],
                    **request_trace(request),
                )
            except UsernameTaken as exc:  # taken between the form's check and the insert
                form.add_error("username", exc.message)
            else:
                login(request, user, backend=LOGIN_BACKEND)
                messages.success(
                    request,
                    f"Welcome, {user.get_username()}: your account is ready; make your API token on your account page.",
                )
                return redirect(_next_url(request))
        status = 400
    else:
        form = SignUpForm(invite_code=_invite_code())
    context["form"] = form
    return render(request, "web/signup.html", context, status=status)


def _profile_page(request: HttpRequest, new_token: str | None = None) -> HttpResponse:
    context = {
        "stored_token": api_token_of(user=request.user),
        "new_token": new_token,
        "api_root": request.build_absolute_uri("/api/v1/"),
    }
    response = render(request, "web/profile.html", context)
    response["Cache-Control"] = "no-store"  # a new token is a password: no cache keeps a copy of the page
    return response


@never_cache
def profile(request: HttpRequest) -> HttpResponse:
    """The account, and of its API token only the prefix (the site cannot show more)."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('web:login')}?next={reverse('web:profile')}")
    return _profile_page(request)


@require_POST
@never_cache
def token_regenerate(request: HttpRequest) -> HttpResponse:
    """Make a new API token, replacing the old one, and show it in full on this answer: the one time it is shown
    (answered here rather than redirected, so that it is never kept anywhere to show later)."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('web:login')}?next={reverse('web:profile')}")
    had_one = api_token_of(user=request.user) is not None
    token = api_token_issue(user=request.user)
    messages.success(
        request,
        "You have a new API token; the old one no longer works." if had_one else "You have an API token.",
    )
    return _profile_page(request, new_token=token)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset view (the same answer whether or not the address has an account), throttled per address."""

    template_name = "web/password_reset.html"
    email_template_name = "web/email/password_reset.txt"
    subject_template_name = "web/email/password_reset_subject.txt"
    success_url = reverse_lazy("web:password-reset-done")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not attempt_allowed(request, scope="password-reset"):
            context = self.get_context_data(form=self.get_form(), error=TOO_MANY)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)


password_reset = PasswordResetView.as_view()
password_reset_done = auth_views.PasswordResetDoneView.as_view(template_name="web/password_reset_done.html")
password_reset_confirm = auth_views.PasswordResetConfirmView.as_view(
    template_name="web/password_reset_confirm.html", success_url=reverse_lazy("web:password-reset-complete")
)
password_reset_complete = auth_views.PasswordResetCompleteView.as_view(template_name="web/password_reset_complete.html")
password_change = auth_views.PasswordChangeView.as_view(
    template_name="web/password_change.html", success_url=reverse_lazy("web:password-change-done")
)
password_change_done = auth_views.PasswordChangeDoneView.as_view(template_name="web/password_change_done.html")

"""What every mail cabletrack sends is built from: its Message-ID (on ``CABLETRACK_MAIL_DOMAIN``),
its subject (one line, cut at a word), its headers (``Auto-Submitted: auto-generated``, so
mail systems send no out-of-office replies to it) and its closing line saying why its reader
gets it. Alert, drain and fault notices and retest digests all go through
:func:`automated_mail`; nothing else sets a mail's headers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.utils.html import escape

from inventory.conf import app_settings
from inventory.core.safetext import one_line

SUBJECT_LIMIT = 200
ELLIPSIS = "…"


@dataclass(frozen=True)
class Addressee:
    """One address a mail goes to, and why (words that follow "because you ...", e.g. "are on
    team Row ops, which looks after rack R01")."""

    address: str
    reason: str


def mail_message_id(local: str) -> str:
    """``<local@CABLETRACK_MAIL_DOMAIN>``: every mail's Message-ID, on one domain."""
    return f"<{local}@{app_settings.mail_domain}>"


def mail_subject(text: str) -> str:
    """``text`` on one line; past ``SUBJECT_LIMIT`` characters cut at the last space that fits,
    with "…" (never mid-word)."""
    out = " ".join(one_line(text).split())
    if len(out) <= SUBJECT_LIMIT:
        return out
    room = out[: SUBJECT_LIMIT - len(ELLIPSIS) + 1]  # one more: a space right after is a word end
    head = room.rsplit(" ", 1)[0] if " " in room else room[: SUBJECT_LIMIT - len(ELLIPSIS)]
    return head[: SUBJECT_LIMIT - len(ELLIPSIS)].rstrip(" ,;:([-–") + ELLIPSIS


def mail_headers(*, message_id: str) -> dict[str, str]:
    """The headers of every mail: its Message-ID and ``Auto-Submitted: auto-generated``."""
    return {"Message-ID": message_id, "Auto-Submitted": "auto-generated"}


def why_line(addressees: Iterable[Addressee]) -> str:
    """The closing line of every mail: why its reader gets it. One reader with several reasons:
    all of them ("... and ..."); a mail to several readers: each distinct reason ("... or ...")."""
    addressees = list(addressees)
    reasons = list(dict.fromkeys(a.reason for a in addressees if a.reason))
    if not reasons:
        return ""
    one_reader = len({a.address.lower() for a in addressees}) == 1
    joiner = "; and because you " if one_reader else "; or because you "
    return "You get this mail because you " + joiner.join(reasons) + "."


def automated_mail(
    *, subject: str, body: str, to: list[str], message_id: str, why: str, html: str = ""
) -> EmailMultiAlternatives:
    """A mail as cabletrack sends it: the subject cut at a word, :func:`mail_headers`, and the
    ``why`` line (:func:`why_line`) closing the text (and the HTML part, if any)."""
    text = body.rstrip("\n") + "\n"
    if why:
        text += f"\n-- \n{why}\n"  # the usual signature separator: a footer
    msg = EmailMultiAlternatives(
        subject=mail_subject(subject),
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=to,
        headers=mail_headers(message_id=message_id),
    )
    if html:
        if why:
            line = f'<p style="color: #555; font-size: 12px;">{escape(why)}</p>'
            html = html.replace("</body>", line + "</body>") if "</body>" in html else html + line
        msg.attach_alternative(html, "text/html")
    return msg

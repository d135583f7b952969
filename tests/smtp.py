"""A real SMTP server on loopback (aiosmtpd) that keeps what it accepted, for mail tests.

``on_data(envelope) -> str | None`` lets a test decide the reply to DATA: ``None`` (or a 250)
accepts and keeps the message; any other reply (``"451 ..."``, ``"550 ..."``) refuses it and
keeps nothing; a hook may call ``sink.keep(envelope)`` itself first (accepted, then trouble). The hook runs in a thread, so it may block (to kill a worker mid-send).
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import logging
import re
import socket
import threading
from dataclasses import dataclass

from aiosmtpd.controller import Controller

logging.getLogger("mail.log").setLevel(logging.WARNING)


@dataclass
class Received:
    rcpt_tos: list[str]
    message: email.message.EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @property
    def message_id(self) -> str:
        return str(self.message["Message-ID"])

    @property
    def to(self) -> str:
        return self.rcpt_tos[0]

    def part(self, subtype: str) -> str:
        body = self.message.get_body(preferencelist=(subtype,))
        return body.get_content() if body is not None else ""

    @property
    def text(self) -> str:
        return self.part("plain")

    @property
    def html(self) -> str:
        return self.part("html")

    @property
    def links(self) -> list[str]:
        return re.findall(r'href="([^"]+/c/[^"]+)"', self.html)


class _Handler:
    def __init__(self, sink: SmtpSink):
        self.sink = sink

    async def handle_DATA(self, server, session, envelope):
        reply = None
        if self.sink.on_data is not None:
            reply = await asyncio.get_running_loop().run_in_executor(None, self.sink.on_data, envelope)
        reply = reply or "250 Message accepted for delivery"
        if reply.startswith("250"):
            self.sink.keep(envelope)
        return reply


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SmtpSink:
    def __init__(self):
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.on_data = None
        self.controller: Controller | None = None
        self.port = 0

    def start(self) -> SmtpSink:
        last = None
        for _ in range(5):
            self.port = free_port()
            self.controller = Controller(_Handler(self), hostname="127.0.0.1", port=self.port)
            try:
                self.controller.start()
                return self
            except Exception as exc:  # the port was taken between probe and bind: try another
                last = exc
        raise RuntimeError(f"could not start the SMTP sink: {last}")

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()

    @property
    def env(self) -> dict[str, str]:
        """Environment for a worker subprocess, so that it mails this server too."""
        return {"EMAIL_URL": f"smtp://127.0.0.1:{self.port}"}

    def keep(self, envelope) -> None:
        """Store a message as accepted (once). A hook may call it before it kills the client:
        aiosmtpd cancels the handler when the connection drops."""
        with self.lock:
            # Mark the envelope itself: an id() can be reused once an envelope is freed.
            if getattr(envelope, "_ct_kept", False):
                return
            envelope._ct_kept = True
            msg = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
            self.received.append(Received(rcpt_tos=list(envelope.rcpt_tos), message=msg))

    def messages(self) -> list[Received]:
        with self.lock:
            return list(self.received)

    def to(self, address: str) -> list[Received]:
        return [m for m in self.messages() if address in m.rcpt_tos]

    def clear(self) -> None:
        with self.lock:
            self.received.clear()

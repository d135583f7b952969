"""Validators shared by services, forms and the API."""

import re

LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")
LABEL_RULE = "1-64 characters: letters, digits and . _ : + - (no spaces or slashes)."

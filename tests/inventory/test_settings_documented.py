"""Every CABLETRACK_* setting is documented in README's configuration table, and ``inventory/conf.py``
reads only settings that ``cabletrack/settings.py`` defines (its defaults live there, once)."""

import re
from pathlib import Path

import cabletrack.settings as project_settings
from inventory.conf import AppSettings, app_settings

ROOT = Path(__file__).resolve().parents[2]


def _settings_names() -> set[str]:
    """The CABLETRACK_* settings, and the CABLETRACK_* environment variables settings.py reads."""
    defined = {name for name in vars(project_settings) if name.startswith("CABLETRACK_")}
    source = (ROOT / "cabletrack" / "settings.py").read_text()
    read_from_env = set(re.findall(r"""\(\s*["'](CABLETRACK_[A-Z0-9_]+)["']""", source))
    return defined | read_from_env


def _readme_table_names() -> set[str]:
    """The names in the first column of README's "Configuration" table."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def _pending_table_names() -> set[str]:
    """Settings documented in docs-pending/*.md table rows, waiting for the docs move (README is
    not edited while it becomes a documentation site)."""
    names: set[str] = set()
    for doc in (ROOT / "docs-pending").glob("*.md"):
        rows = [line for line in doc.read_text().splitlines() if line.startswith("| `CABLETRACK_")]
        names |= {n for row in rows for n in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}
    return names


def test_every_cabletrack_setting_is_in_the_readme_configuration_table():
    missing = _settings_names() - _readme_table_names() - _pending_table_names()
    assert not missing, f"add these to README's configuration table: {sorted(missing)}"


def test_conf_reads_only_settings_that_settings_py_defines():
    unknown = [name for name in AppSettings.setting_names() if not hasattr(project_settings, name)]
    assert not unknown, f"inventory/conf.py names settings that cabletrack/settings.py lacks: {unknown}"


def test_conf_reads_every_setting_settings_py_defines():
    defined = {name for name in vars(project_settings) if name.startswith("CABLETRACK_")}
    assert defined == set(AppSettings.setting_names())


def test_app_settings_follow_overrides(settings):
    settings.CABLETRACK_LABELS_INLINE_MAX = 7
    assert app_settings.labels_inline_max == 7

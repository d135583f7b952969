"""Every CABLETRACK_* setting is in the generated configuration reference (docs/operator), and ``inventory/conf.py``
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


def _reference_names() -> set[str]:
    """The names in the first column of the generated configuration reference."""
    from tools.docs import configuration_reference

    rows = [line for line in configuration_reference().splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def test_every_cabletrack_setting_is_in_the_configuration_reference():
    missing = _settings_names() - _reference_names()
    assert not missing, f"document these in inventory/conf.py: {sorted(missing)}"


def test_conf_reads_only_settings_that_settings_py_defines():
    unknown = [name for name in AppSettings.setting_names() if not hasattr(project_settings, name)]
    assert not unknown, f"inventory/conf.py names settings that cabletrack/settings.py lacks: {unknown}"


def test_conf_reads_every_setting_settings_py_defines():
    defined = {name for name in vars(project_settings) if name.startswith("CABLETRACK_")}
    assert defined == set(AppSettings.setting_names())


def test_app_settings_follow_overrides(settings):
    settings.CABLETRACK_LABELS_INLINE_MAX = 7
    assert app_settings.labels_inline_max == 7

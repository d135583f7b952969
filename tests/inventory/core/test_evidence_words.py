"""Alert evidence reads in the one vocabulary: every key a rule (or the code around the rules)
can write into an alert's evidence has a human label in ``inventory.core.words.KEYS``, and the
alert page's rows come from it ("PMD", "Speed" 400 Gb/s, never "Pmd" or "Speed gbps").

The keys are collected from the source, not listed here, so a rule that gains a key without
words fails this test: string keys of the dict literals given as ``evidence=`` / ``ends=``, the
fourth argument of ``Collector.add``, what is assigned to (or stored into) an ``evidence`` or
``ends``, and the demo's ``_ALERTS`` table. The values under keys the page lays out itself
(ports, modules, the path) or hides (``EVIDENCE_HIDDEN``, ids) are not evidence rows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from inventory.core.words import EVIDENCE_HIDDEN, KEYS, evidence_rows, word
from tests.inventory.phone_checks import RAW_CODE

ROOT = Path(__file__).resolve().parents[3] / "inventory"
SOURCES = [
    *sorted((ROOT / "core/telemetry/rules").glob("*.py")),
    ROOT / "services/alerts/naming.py",
    ROOT / "services/alerts/lifecycle.py",
    ROOT / "services/testing/findings.py",
    ROOT / "services/telemetry/identity.py",
    ROOT / "services/demo/incidents.py",
]
EVIDENCE_NAMES = {"evidence", "ends", "end_evidence"}
# Acronyms a naive title-casing spoils: "Pmd", "Fec", "Ber", "Pfc", "Dom", "Tia", "Otdr".
NAIVE = re.compile(r"\b(?:Pmd|Fec|Ber|Pfc|Dom|Tia|Otdr|Dbm|Gbps)\b|\b(?:pmd|fec|ber|pfc|dom|tia|otdr|gbps)\b")


def _dict_keys(node: ast.AST) -> set[str]:
    """String keys of every dict literal under ``node``, not descending into hidden keys' values."""
    keys: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    keys.add(k.value)
                    if k.value in EVIDENCE_HIDDEN:
                        continue
                stack.append(v)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return keys


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ""


def emitted_keys() -> dict[str, set[str]]:
    """Evidence key -> the source files that write it."""
    found: dict[str, set[str]] = {}
    for path in SOURCES:
        keys: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg in EVIDENCE_NAMES:
                        keys |= _dict_keys(kw.value)
                if isinstance(node.func, ast.Attribute) and node.func.attr == "add" and len(node.args) == 4:
                    keys |= _dict_keys(node.args[3])
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if _name(target) in EVIDENCE_NAMES:
                        keys |= _dict_keys(node.value)
                    if (
                        isinstance(target, ast.Subscript)
                        and _name(target.value) in EVIDENCE_NAMES
                        and isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        keys.add(target.slice.value)
                    if isinstance(target, ast.Name) and target.id == "_ALERTS":
                        keys |= _dict_keys(node.value)
        for k in keys:
            found.setdefault(k, set()).add(path.name)
    return found


def test_the_collector_finds_the_keys_of_every_rule_family():
    keys = emitted_keys()
    # One key from each source: the collector reads what the rules really write.
    for expected in (
        "metric",  # fec degradation and the demo
        "codewords_over_80pct",  # fec tail
        "speed_gbps",  # link rules and the link record (naming)
        "worst_drop_db",  # rx power
        "pause_frames_sent_per_s",  # pfc
        "reported_serial",  # wiring and the ingest identity check
        "reporting",  # collect
        "pmd",  # naming: the link
        "threshold_db",  # the test comparison
        "reopened",  # lifecycle
    ):
        assert expected in keys, expected
    assert len(keys) > 50


def test_every_evidence_key_a_rule_can_write_has_human_words():
    missing, naive = [], []
    for key, files in sorted(emitted_keys().items()):
        if key in EVIDENCE_HIDDEN or key.endswith("_id") or key in {"a", "b", "port"}:
            continue
        if key not in KEYS:
            missing.append(f"{key} ({', '.join(sorted(files))})")
            continue
        label = word(key)
        if RAW_CODE.search(label) or "_" in label or NAIVE.search(label):
            naive.append(f"{key} -> {label!r}")
    assert not missing, "evidence keys with no words in inventory/core/words.py KEYS: " + "; ".join(missing)
    assert not naive, "labels that are not words: " + "; ".join(naive)


def test_an_alerts_evidence_reads_as_words_with_units_beside_the_values():
    rows = dict(
        evidence_rows(
            {
                "link": {
                    "id": 322,
                    "pmd": "400GBASE-DR4",
                    "fec": "RS544",
                    "class": "leaf-spine",
                    "speed_gbps": 400,
                },
                "recommendation_code": "replace_module",
                "reporting": {"a": True, "b": False},
                "history": [{"at": "2026-12-01T10:00:00+00:00", "ends": {}}],
                "reopened": ["2026-12-01T10:00:00+00:00"],
                "sender_port_id": 7,
                "fec_limit": None,
                "paused_share": 0.25,
                "bucket_s": 60,
            }
        )
    )
    assert rows == {
        "PMD": "400GBASE-DR4",
        "FEC": "RS(544,514) KP4",
        "Link class": "leaf-spine",
        "Speed": "400 Gb/s",
        "Telemetry from": "A end: yes, B end: no",
        "Reopened": "1 Dec 2026 10:00",
        "Share of time paused": "25%",
        "Sample interval": "60 s",
    }


@pytest.mark.parametrize("hidden", ["recommendation_code", "history", "ends", "segments", "port_id"])
def test_bookkeeping_keys_and_empty_values_are_no_rows(hidden):
    assert evidence_rows({hidden: "clean"}) == []
    assert evidence_rows({"baseline": None, "recorded_serial": ""}) == []


def test_a_key_no_rule_names_still_reads_as_a_label():
    """Evidence stored by an older version (the demo's ``flaps``) shows as a capitalised label."""
    assert evidence_rows({"flaps": 7, "window_minutes": 60}) == [("Flaps", "7"), ("Window minutes", "60")]

"""Test records: power meter (OLTS), OTDR, end-face inspection and link qualification.

Every write computes the verdict against the right budget, marks the first passing test the
baseline and raises a ``loss_increase`` finding when a retest lost ground (``findings``). The
production gate is a read: ``inventory.selectors.testing.gate``.
"""

from inventory.services.testing.inspection import IEC_ZONES, EndInspection, cable_inspect, cable_inspect_ends
from inventory.services.testing.olts import FibreReading, OltsInput, cable_test_record_olts, olts_validate
from inventory.services.testing.otdr import (
    OtdrSession,
    SorUpload,
    cable_test_upload_otdr,
    not_judged_words,
    otdr_sessions_upload,
    sor_parse_many,
)
from inventory.services.testing.qualification import QualificationInput, link_qualify, qualification_check

__all__ = [
    "IEC_ZONES",
    "FibreReading",
    "OltsInput",
    "OtdrSession",
    "QualificationInput",
    "SorUpload",
    "EndInspection",
    "cable_inspect",
    "cable_inspect_ends",
    "cable_test_record_olts",
    "cable_test_upload_otdr",
    "link_qualify",
    "not_judged_words",
    "olts_validate",
    "otdr_sessions_upload",
    "qualification_check",
    "sor_parse_many",
]

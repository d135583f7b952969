"""What the forecast reads: cohort inputs (``cohorts``) and link risk features (``link_risk``)."""

from inventory.selectors.forecast.cohorts import CohortData, Key, cohort_data, failed_placements, lot_of
from inventory.selectors.forecast.link_evidence import LinkEvidence, link_evidence
from inventory.selectors.forecast.link_risk import LinkFeatures, link_features, link_labels

__all__ = [
    "CohortData",
    "Key",
    "LinkEvidence",
    "LinkFeatures",
    "cohort_data",
    "failed_placements",
    "link_evidence",
    "link_features",
    "link_labels",
    "lot_of",
]

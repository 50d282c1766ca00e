"""Fitting the gate (``rag calibrate``): the thresholds :class:`rag.rerank.gate.Gate` reads, fitted on data.

The gate lives in :mod:`rag.rerank.gate` and answers live requests; everything that *fits* it is here,
offline, above the pipeline and the evaluation it reads questions with:

- :mod:`rag.calibrate.labelled`: on labelled questions with their own passages (``rag calibrate --dataset``):
  one threshold per signal group at a target precision, the report and the calibrated config;
- :mod:`rag.calibrate.probes`: probe questions written from the indexed corpus, answerable and not;
- :mod:`rag.calibrate.feedback`: the labelled lines of a ``rag batch`` results file;
- :mod:`rag.calibrate.auto`: ``rag calibrate --auto`` (and ``--from-batch``): the gate fitted on the probes
  and the labelled lines, with no labelled set.

The reranker's own probability map (Platt scaling, :mod:`rag.rerank.calibration`) is applied at inference
and fitted with the reader's model, so it stays with the reranker.
"""
from rag.calibrate.auto import (
    STANDARD_ERRORS,
    AutoReport,
    GroupFit,
    ScoredProbe,
    auto_calibrate,
    confident_threshold,
    probe_sources,
    score_probes,
)
from rag.calibrate.feedback import (
    DEFAULT_WEIGHT,
    FeedbackFileError,
    FeedbackItem,
    FeedbackSet,
    read_feedback,
)
from rag.calibrate.labelled import (
    CalibrationReport,
    calibrate,
    calibrate_threshold,
    thresholds_from_report,
    write_calibrated_config,
)
from rag.calibrate.probes import Probe, ProbeSource, make_probes

__all__ = [
    "AutoReport",
    "CalibrationReport",
    "DEFAULT_WEIGHT",
    "FeedbackFileError",
    "FeedbackItem",
    "FeedbackSet",
    "GroupFit",
    "Probe",
    "ProbeSource",
    "STANDARD_ERRORS",
    "ScoredProbe",
    "auto_calibrate",
    "calibrate",
    "calibrate_threshold",
    "confident_threshold",
    "make_probes",
    "probe_sources",
    "read_feedback",
    "score_probes",
    "thresholds_from_report",
    "write_calibrated_config",
]

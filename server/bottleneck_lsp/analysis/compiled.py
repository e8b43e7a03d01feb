"""torch.compile's records of a run (``Pass.dynamo``, the sample pass's): what the report
and the editor show of graph breaks, recompiles and each ``torch.compile`` call."""

from __future__ import annotations

from ..schema.model import Document, Dynamo


def dynamo(doc: Document) -> Dynamo | None:
    """The run's torch.compile records: the first pass that has them (the sample pass)."""
    return next((p.dynamo for p in doc.passes if p.dynamo is not None), None)

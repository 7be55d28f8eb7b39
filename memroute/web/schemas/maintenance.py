"""`/api/memory/health`, `/summarize` and `/reindex`: the maintenance reports of
`memroute.models.results`, derived, and their request bodies."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from memroute.models import results
from memroute.web.schemas.common import STORED_TEXT, JsonInt, StrictBody, documented_pattern
from memroute.web.schemas.derive import wire_model
from memroute.web.schemas.memory import MemoryOut  # noqa: F401 (derived first: the schema of the candidates)

HealthSteps = wire_model(results.VerifySteps, "HealthSteps")
HealthOut = wire_model(
    results.VerifyReport,
    "HealthOut",
    refine={"error": Annotated[str | None, Field(description="Present only when working is false")]},
)
SummaryWritten = wire_model(results.SummaryWritten, "SummaryWritten")
SummarizeOut = wire_model(
    results.SummaryReport,
    "SummarizeOut",
    refine={
        "summary_id": Annotated[
            str | None, Field(description="The summary's id when exactly one summary was written")
        ],
    },
    describe={"candidates": "the oldest 100 candidates (candidateCount counts them all)"},
)
# The REST answer starts the run in the background: what it processed is in engine-status.
ReindexOut = wire_model(
    results.ReindexReport,
    "ReindexOut",
    exclude=("processed", "errors", "qdrant"),
    refine={
        "reason": Annotated[
            str | None, Field(description="why nothing started (no embedding source, no sqlite-vec)")
        ]
    },
)


class ReindexRequest(StrictBody):
    force: bool = Field(False, description="re-embed every memory, not only those waiting")


class SummarizeRequest(StrictBody):
    """Compact memories not updated for `olderThanDays` into summaries per key: give
    `apiKeyId` or `allKeys: true`, not both."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": ["apiKeyId"], "properties": {"apiKeyId": {"type": "string"}}},
                {"required": ["allKeys"], "properties": {"allKeys": {"const": True}}},
            ]
        }
    )

    olderThanDays: JsonInt = Field(30, ge=1, le=365)
    apiKeyId: str | None = Field(
        None,
        max_length=256,
        description="the key to compact",
        json_schema_extra=documented_pattern(STORED_TEXT),
    )
    allKeys: bool = Field(False, description="compact every key (each key gets its own summary)")
    dryRun: bool = Field(False, description="only list the candidates")

"""The pydantic models of the management API; they make `/openapi.json`.

One module per route group: `memory` (memories, list, history, preview, import),
`maintenance` (health, summarize, reindex), `engine` (engine status, embedding
providers), `settings`, `qdrant`, `keys` (client keys and providers), `session`,
`gateway` (the `/v1` errors) and `errors`; `common` holds what request bodies share.
Response models of result records are derived from their dataclasses (`derive`).
"""

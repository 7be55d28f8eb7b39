"""The MCP server: memroute's memory as tools for LLM clients.

One tool set, two transports: stdio (`memroute mcp`, for Claude Desktop, Cursor,
VS Code…; the local user is trusted with every key) and streamable HTTP at `/mcp` in
the server, where the caller presents `Authorization: Bearer <token>`: the admin token
reaches every key, a client key (`mr-…`) only its own memories.

Errors come back as MCP tool errors with a clear message; the server never crashes.
"""

from __future__ import annotations

import functools
import hmac
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from memroute.errors import MemrouteError
from memroute.memory import validate
from memroute.models.owners import owner_of
from memroute.models.records import MemoryRecord
from memroute.models.wire import to_wire
from memroute.service import Memory

log = logging.getLogger("memroute.mcp")

MemoryType = Literal["factual", "episodic", "procedural", "semantic"]
ApiKeyId = Annotated[
    str | None,
    Field(
        description="Id of the API key whose memories to use (the memory owner). Required with the admin "
        "token or over stdio; a client key may omit it (it always means that key)."
    ),
]
UserId = Annotated[
    str,
    Field(
        description="An end user of the key (the id an application sends as `user`): that user's own "
        "memories alone. Empty: the key's own memories.",
    ),
]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls a tool: `key_id` None means every key (admin token or the local stdio user)."""

    key_id: str | None

    def owner(self, requested: str | None, user: str = "") -> str:
        """The owner a tool works on: the key (the caller's own, or the one named), or
        that key's end user `user`."""
        if self.key_id is None:
            if requested is None or not requested.strip():
                raise ToolError("apiKeyId is required: the id of the API key whose memories to use")
            key = requested.strip()
        elif requested not in (None, "", self.key_id):
            raise ToolError("this client key may only use its own memories: omit apiKeyId or pass its own id")
        else:
            key = self.key_id
        return owner_of(validate.owner(key), validate.end_user(user))

    def check(self, memory: MemoryRecord | None, memory_id: str) -> MemoryRecord:
        # Another key's memory (or its end users') is reported exactly like a missing one.
        if memory is None or (self.key_id is not None and memory.key_id != self.key_id):
            raise ToolError(f"memory {memory_id} not found")
        return memory


def caller_of(ctx: Context, memory: Memory, admin_token: str | None) -> Caller:
    headers: Mapping[str, str] | None = ctx.headers
    if headers is None:  # stdio: the local user, who can open the database anyway
        return Caller(None)
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ToolError("unauthorized: send Authorization: Bearer <admin token or client key>")
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Caller(None)
    key = memory.keys.authenticate(token)
    if key is None:
        raise ToolError("unauthorized: unknown or revoked key")
    return Caller(key.id)


def _tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """memroute's own errors become tool errors with their message; others are logged."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except MemrouteError as exc:
            raise ToolError(exc.message) from None
        except Exception:
            log.exception("mcp.tool.failed tool=%s", fn.__name__)
            raise ToolError("internal error (see the memroute server log)") from None

    return wrapper


def build_server(memory: Callable[[], Memory], *, admin_token: str | None = None) -> MCPServer:
    """The MCP server with memroute's tools. `memory()` returns the open service (the
    HTTP app opens it in its lifespan, after this is built)."""
    mcp = MCPServer(
        "memroute",
        instructions="Long-term memory about the user, kept per API key. Search it before answering "
        "questions about the user's preferences, decisions and habits; add facts the user states.",
        log_level="WARNING",
    )

    def who(ctx: Context) -> tuple[Memory, Caller]:
        mem = memory()
        return mem, caller_of(ctx, mem, admin_token)

    @mcp.tool()
    @_tool_errors
    def memory_search(
        ctx: Context,
        apiKeyId: ApiKeyId = None,
        query: Annotated[
            str | None,
            Field(description="What to look for, in natural language. Empty: the newest memories."),
        ] = None,
        type: Annotated[MemoryType | None, Field(description="Only memories of this type.")] = None,
        maxTokens: Annotated[
            int | None,
            Field(ge=1, le=16000, description="Token budget of the answer (default: the settings')."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many memories.")] = 20,
        userId: UserId = "",
    ) -> dict[str, Any]:
        """Search the stored memories of an API key: the most relevant first, within a token budget.
        Uses the configured retrieval strategy (keyword, semantic or hybrid), also when memory injection
        is switched off for chats. Returns the memories with their score, the count and the total tokens."""
        mem, caller = who(ctx)
        owner = caller.owner(apiKeyId, userId)
        settings = mem.settings()
        budget = maxTokens if maxTokens is not None else (settings.max_tokens or 2000)
        items = mem.retrieve(
            owner,
            query,
            strategy=settings.retrieval_strategy,
            max_tokens=budget,
            limit=limit,
            settings=settings,
            memory_type=type,
        )
        memories = [
            {**to_wire(i.memory), "score": i.score, "tokens": i.tokens, "tier": i.tier} for i in items
        ]
        return {"memories": memories, "count": len(items), "totalTokens": sum(i.tokens for i in items)}

    @mcp.tool()
    @_tool_errors
    def memory_add(
        ctx: Context,
        content: Annotated[
            str, Field(min_length=1, description="The fact to remember, e.g. 'prefers tabs'.")
        ],
        apiKeyId: ApiKeyId = None,
        type: Annotated[
            MemoryType,
            Field(
                description="factual (a lasting fact), episodic (an event or decision), procedural (how "
                "the user does things), semantic (general knowledge or a summary)."
            ),
        ] = "factual",
        key: Annotated[
            str,
            Field(
                description="Optional stable key, e.g. 'preference:editor'. Adding again with the same "
                "key replaces the old memory (the old text stays in its history)."
            ),
        ] = "",
        sessionId: Annotated[str, Field(description="Optional session the memory belongs to.")] = "",
        metadata: Annotated[dict[str, Any] | None, Field(description="Optional JSON object.")] = None,
        expiresAt: Annotated[
            str | None, Field(description="Optional ISO-8601 time after which the memory is ignored.")
        ] = None,
        userId: UserId = "",
    ) -> dict[str, Any]:
        """Store a memory for an API key or one of its end users (or replace the one with the same key)."""
        mem, caller = who(ctx)
        owner = caller.owner(apiKeyId, userId)
        before = mem.get_by_key(owner, key) if key.strip() else None
        record = mem.add(
            owner,
            content,
            key=key,
            type=type,
            session_id=sessionId,
            metadata=metadata,
            expires_at=expiresAt,
            actor="mcp",
        )
        created = before is None
        return {
            "memory": to_wire(record),
            "created": created,
            "message": "Memory created" if created else "Memory with this key replaced",
        }

    @mcp.tool()
    @_tool_errors
    def memory_clear(
        ctx: Context,
        apiKeyId: ApiKeyId = None,
        type: Annotated[MemoryType | None, Field(description="Only memories of this type.")] = None,
        olderThan: Annotated[
            str | None, Field(description="Only memories created before this ISO-8601 date or time.")
        ] = None,
        userId: UserId = "",
    ) -> dict[str, Any]:
        """Delete ALL memories of one API key (or of one of its end users), optionally only of one type
        or created before a date. Cannot be undone from the tools (the text is kept in each memory's
        history)."""
        mem, caller = who(ctx)
        owner = caller.owner(apiKeyId, userId)
        count = mem.clear(owner, memory_type=type, older_than=olderThan, actor="mcp")
        return {"deletedCount": count, "message": f"Cleared {count} memories"}

    @mcp.tool()
    @_tool_errors
    def memory_delete(
        ctx: Context, id: Annotated[str, Field(min_length=1, description="The memory's id.")]
    ) -> dict[str, Any]:
        """Delete one memory by its id (as returned by memory_search or memory_list). Its text stays
        in the memory's history."""
        mem, caller = who(ctx)
        caller.check(mem.get(id), id)
        mem.delete(id, actor="mcp")
        return {"deleted": True, "id": id}

    @mcp.tool()
    @_tool_errors
    def memory_get(
        ctx: Context, id: Annotated[str, Field(min_length=1, description="The memory's id.")]
    ) -> dict[str, Any]:
        """One memory by its id, with every field (content, type, key, session, metadata, times, uses)
        and its provenance: where it came from, in `provenance.summary` as one line such as
        "learned from request req_… at 2026-05-08 14:03 UTC (Caroline, session s1)" (null when unknown)."""
        mem, caller = who(ctx)
        return {"memory": to_wire(caller.check(mem.get(id), id))}

    @mcp.tool()
    @_tool_errors
    def memory_list(
        ctx: Context,
        apiKeyId: ApiKeyId = None,
        type: Annotated[MemoryType | None, Field(description="Only memories of this type.")] = None,
        sessionId: Annotated[str | None, Field(description="Only memories of this session.")] = None,
        q: Annotated[str | None, Field(description="Only memories whose text or key contains this.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Memories per page.")] = 20,
        page: Annotated[int, Field(ge=1, description="Page number, from 1.")] = 1,
        userId: UserId = "",
    ) -> dict[str, Any]:
        """List an API key's own memories (or one end user's), newest first, with paging and filters."""
        mem, caller = who(ctx)
        owner = caller.owner(apiKeyId, userId)
        result = mem.list(owner, type=type, session_id=sessionId, q=q, limit=limit, page=page, user_id="")
        return {
            "memories": [to_wire(m) for m in result.items],
            "total": result.total,
            "page": page,
            "limit": limit,
        }

    return mcp


TOOL_NAMES = ("memory_search", "memory_add", "memory_clear", "memory_delete", "memory_get", "memory_list")

"""`/api/session`: the dashboard's login with the admin token."""

from __future__ import annotations

from pydantic import BaseModel, Field

from memroute.web.schemas.common import StrictBody


class LoginRequest(StrictBody):
    token: str = Field(min_length=1, max_length=1024, description="the admin token")


class SessionOut(BaseModel):
    authenticated: bool
    expiresAt: str | None = None

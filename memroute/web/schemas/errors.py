"""The error body of the management API, and the error responses routes declare."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ErrorDetail(BaseModel):
    message: str
    type: str = Field(description="invalid_request_error, authentication_error, not_found_error, …")


class ErrorResponse(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Invalid input (nothing was written)"},
    401: {"model": ErrorResponse, "description": "Missing or wrong admin token"},
    413: {"model": ErrorResponse, "description": "Request body over MEMROUTE_MAX_BODY_BYTES"},
    # Every error has this shape; declaring it also keeps FastAPI from documenting a 422,
    # which memroute never sends (validation errors are 400).
    "default": {"model": ErrorResponse, "description": "Any other error, same shape"},
}

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorResponse, "description": "Not found"}}
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorResponse, "description": "Conflicts with what is stored (e.g. a key already in use)"}
}

"""The one rule for secrets shown or logged: masked as `***` plus a tail, scrubbed out of
messages, and URLs logged without credentials."""

from __future__ import annotations

import pytest

from memroute.masking import mask_secret, scrub, url_for_logs
from memroute.models.records import ProviderRecord
from memroute.models.wire import to_wire
from memroute.vectors.qdrant_settings import QdrantSettings

EPOCH = "1970-01-01T00:00:00.000Z"


def test_scrub_removes_secrets_and_key_like_strings() -> None:
    secret = "verysecretvalue123"
    text = (
        f"key {secret} failed; Authorization: Bearer abc.def-123 and sk-proj-ABCDEFGHIJKLMNOP at "
        "https://user:pass@api.example.com/v1\n\n  done"
    )
    clean = scrub(text, [secret, None, ""])
    assert secret not in clean and "abc.def-123" not in clean and "ABCDEFGHIJKLMNOP" not in clean
    assert "user:pass" not in clean and "https://***@api.example.com/v1" in clean
    assert "Bearer ***" in clean and "\n" not in clean and "  " not in clean


def test_scrub_removes_memroute_client_keys() -> None:
    clean = scrub("refused mr-Q2xhdWRlIHdhcyBoZXJlIGFuZCBsZWZ0IGEga2V5 for k1")
    assert clean == "refused mr-*** for k1"


def test_scrub_cuts_long_messages() -> None:
    clean = scrub("x" * 10_000)
    assert len(clean) == 500 and clean.endswith("…")


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        (None, None),
        ("", None),
        ("abcd", "***"),
        ("12345678901", "***"),  # 11 characters: the tail would be more than a third of it
        ("123456789012", "***9012"),
        ("sk-live-0123456789abcdef", "***cdef"),
    ],
)
def test_one_masking_rule_for_provider_and_qdrant_keys(secret: str | None, shown: str | None) -> None:
    assert mask_secret(secret) == shown
    provider = ProviderRecord("p", "https://example.com/v1", None, secret, False, EPOCH, EPOCH)
    assert to_wire(provider)["apiKeyMasked"] == shown
    assert QdrantSettings(api_key=secret or None).public().api_key_masked == shown


@pytest.mark.parametrize(
    ("url", "logged"),
    [
        ("https://user:pw@api.example.com:8443/v1?key=AIzaSECRET#frag", "https://api.example.com:8443/v1"),
        ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("http://exa[mple", "(an unparsable URL)"),
        ("api.example.com/v1", "(a URL without a scheme)"),
    ],
)
def test_urls_are_logged_without_credentials_or_query(url: str, logged: str) -> None:
    assert url_for_logs(url) == logged

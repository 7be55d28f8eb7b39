"""Secrets never become memories (memory/redact.py): a corpus of secrets that must be
replaced, and of ordinary text that must stay exactly as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from memories import open_memory
from storage import scalar

from memroute.config import Config
from memroute.memory.redact import REDACTED, redact

SECRETS = [
    ("my OpenAI key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
    ("use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv for Claude", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"),
    ("stripe rk_live_51HcXyZAbCdEfGhIjKlMn", "rk_live_51HcXyZAbCdEfGhIjKlMn"),
    ("my memroute key mr-Qx7Lk2Vb9Np4Rt6Ys1Wz3", "mr-Qx7Lk2Vb9Np4Rt6Ys1Wz3"),
    ("token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("gitlab glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("AWS AKIAIOSFODNN7EXAMPLE in prod", "AKIAIOSFODNN7EXAMPLE"),
    ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 is my HF token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9",
    ),
    ("Authorization: Bearer 7f9c2ba4e88f827d616045507605853e", "7f9c2ba4e88f827d616045507605853e"),
    ("my password is hunter2024!", "hunter2024!"),
    ("the wifi passphrase: correct-horse-battery", "correct-horse-battery"),
    ("api_key=abcd1234efgh5678", "abcd1234efgh5678"),
    ("my bank PIN is 4921", "4921"),
    ("client secret: 9s8d7f6g5h4j", "9s8d7f6g5h4j"),
    ("pay with 4111 1111 1111 1111 please", "4111 1111 1111 1111"),
    ("card 5555-5555-5555-4444 exp 12/29", "5555-5555-5555-4444"),
    ("amex 378282246310005", "378282246310005"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7",
    ),
]

ORDINARY = [
    "I prefer Python 3.12 and Next.js 14 for new projects.",
    "I usually keep a token budget of 2000 and pin versions in CI.",
    "My order number is 1234567890123 and my phone is +49 30 1234567.",
    "We decided to use Postgres 16.2 on port 5432.",
    "The secret is to practice every day.",
    "I like sk-learn less than PyTorch; my keyboard is a Keychron K2.",
    "Meeting at 2026-06-01T12:00:00Z in room 4.12, invoice 2026-0042.",
    "The ISBN is 9780262033848.",
]


# Each sits at the edge of a quick check that lets a rule skip a text (memory/redact.py).
EDGES = [
    ("PAſSWORD=x9y8z7w6", "x9y8z7w6"),  # a letter a case-blind match reads as "s"
    ("my paſsword is hunter2", "hunter2"),
    ("pass_word=Hunter2024", "Hunter2024"),  # the label word split by "_"
    ("API.TOKEN -> Zx81kPq0LmN3vB7wR2tY", "Zx81kPq0LmN3vB7wR2tY"),
    ("-pS3cretPass9 is how I log in", "S3cretPass9"),  # the option at the very start
    ("4111111111111111", "4111111111111111"),  # the whole text is the secret
    ('"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"', "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
    ("KEY:AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),  # inside a longer word
    ("Zx81kPq0LmN3vB7wR2tYaa", "Zx81kPq0LmN3vB7wR2tYaa"),
    ("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t then Qm3nR7vX2kL9pT4wY8zB1cD6", "Qm3nR7vX2kL9pT4wY8zB1cD6"),
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n"
        "and ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    ),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS + EDGES)
def test_every_kind_of_secret_is_replaced(text: str, secret: str) -> None:
    cleaned = redact(text)
    assert secret not in cleaned
    assert REDACTED in cleaned


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_exactly_as_it_is(text: str) -> None:
    assert redact(text) == text


def test_a_secret_in_a_chat_is_never_stored_nor_queued(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db") as mem:
        text = "I prefer deploying with token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 on Fridays."
        mem.enqueue_extraction("k", text)
        queued = scalar(mem, "SELECT text FROM extraction_jobs")
        assert queued is not None and "ghp_" not in queued
        mem.wait_for_extraction(10)
        [fact] = mem.list("k").items
        assert fact.content == "prefers deploying with token"  # the capture ends at the placeholder
        stored = mem.remember("k", "I always type my password: hunter2024 twice.")
        assert [m.content for m in stored] == ["always types their password"]
        assert "hunter2024" not in str([h.new_content for h in mem.history(stored[0].id)])


def test_redaction_can_be_switched_off(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_REDACT": "false"})
    with open_memory(config=config) as mem:
        [fact] = mem.remember("k", "I prefer the staging key sk-test-AbCdEfGhIjKlMnOpQrSt.")
        assert "sk-test-AbCdEfGhIjKlMnOpQrSt" in fact.content


def test_a_url_password_after_a_long_run_of_scheme_characters_is_redacted() -> None:
    # 20,000 characters a scheme may hold ("a-a-…") before the URL: each is read once.
    text = "a-" * 10_000 + " see postgres://app:S3cretPw@db:5432/app"
    assert redact(text) == "a-" * 10_000 + " see postgres://app:[redacted]@db:5432/app"

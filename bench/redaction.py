"""Cost of the secret redactor (memroute/memory/redact.py) on the texts a memory write sees:
short chat turns, prose, code, a 760-character message and sentences that hold a secret.

python -m bench.redaction              # best of 7 rounds, ~5 s
python -m bench.redaction --rounds 3

Each case prints microseconds of CPU per call (best round; the median beside it; CPU time,
so that other work on a shared machine counts less) for a text of that kind; the mix row
is the mean over all of them, weighted as a chat would send them.
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Sequence

from memroute.memory.redact import redact

SHORT_TURNS = [
    "thanks, that worked!",
    "can you make it shorter?",
    "I prefer dark mode in every editor.",
    "what's the weather like in Berlin tomorrow?",
    "ok, and how do I undo the last commit?",
    "My daughter's name is Mia and she is 7.",
]
PROSE = [
    "We moved the team offsite to the second week of June because half of the people are on "
    "holiday in May, and the venue near the lake was booked anyway. Please bring a laptop.",
    "I have been reading about sourdough: the starter needs feeding twice a day, a warm kitchen "
    "helps, and the first loaves are usually flat. Mine finally rose after three weeks.",
    "The quarterly review showed revenue up 12% and churn down to 3.1%, mostly thanks to the new "
    "onboarding flow; the support backlog is still around 240 tickets.",
]
CODE = [
    "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n"
    "        except TimeoutError:\n            time.sleep(2 ** i)\n    raise RuntimeError('gave up')\n",
    "const res = await fetch(`/api/memories?limit=${limit}`, { headers: { Accept: 'application/json' } });\n"
    "if (!res.ok) throw new Error(res.statusText);\nconst { items } = await res.json();\n",
    "SELECT id, content FROM memories WHERE key_id = ? AND deleted_at IS NULL ORDER BY updated_at DESC "
    "LIMIT 50; -- commit 9f2c4e1b7a3d5f60812e4c9b0a7d3e1f5c2b4a60 on branch release/2.4",
]
LONG_MESSAGE = (
    "Hi! Quick summary of where I am with the migration, so you can remember it for next time. "
    "We run Postgres 16.2 on port 5432 behind pgbouncer, and the app is a Django 5.0 project on "
    "Python 3.12. The failing job is build 20240601T120000Z-batch-0042 and the container id is "
    "3f9a1c2e7b4d. I tried `python manage.py migrate --plan` and it lists 14 migrations, the last "
    "one being 0042_add_index_on_created_at. The docs I followed are at "
    "https://docs.djangoproject.com/en/5.0/topics/migrations/ and the ticket is PROJ-1187. "
    "My colleague Anna (anna.schmidt@example.com) says the staging database was restored from the "
    "snapshot of 2024-05-30, so the row counts differ: 1,204,331 rows in events vs 1,198,002. "
    "I prefer fixing this with a data migration rather than raw SQL."
)
SECRET_BEARING = [
    "the password hunter2 for the prod database",
    "DB_PASSWORD=CorrectHorse9",
    "export OPENAI_API_KEY=sk-proj-Qm3nR7vX2kL9pT4wY8zB1cD6",
    "connect with postgres://app:S3cretPw@db.internal:5432/app",
    "my API key is 3f8a9c2d7b1e4f6a8c0d2e4f6a8b0c1d, keep it safe",
]
CASES: dict[str, tuple[list[str], int]] = {  # texts, weight in the mix
    "short chat turn": (SHORT_TURNS, 10),
    "prose paragraph": (PROSE, 4),
    "code snippet": (CODE, 2),
    "760-character message": ([LONG_MESSAGE], 2),
    "sentence with a secret": (SECRET_BEARING, 1),
}


def per_call_us(texts: Sequence[str], rounds: int) -> tuple[float, float]:
    """(best, median) microseconds per `redact` call over `texts`, across `rounds` rounds."""
    number = max(1, 20_000 // (sum(map(len, texts)) // len(texts) + 50))
    timer = timeit.Timer(lambda: [redact(t) for t in texts], timer=time.process_time)
    times = [t / (number * len(texts)) * 1e6 for t in timer.repeat(rounds, number)]
    return min(times), statistics.median(times)


def main(argv: Sequence[str] | None = None) -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--rounds", type=int, default=7)
    rounds = args.parse_args(argv).rounds
    print("| text | chars | µs per call (best) | median |")
    print("|---|---:|---:|---:|")
    mix = 0.0
    for name, (texts, weight) in CASES.items():
        best, median = per_call_us(texts, rounds)
        mix += best * weight
        chars = round(sum(map(len, texts)) / len(texts))
        print(f"| {name} | {chars} | {best:.1f} | {median:.1f} |")
    total_weight = sum(weight for _, weight in CASES.values())
    print(f"| mix (weighted) | | {mix / total_weight:.1f} | |")


if __name__ == "__main__":
    main()

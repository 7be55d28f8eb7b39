-- Per-key overrides of the gateway's limits; NULL: the server's default
-- (MEMROUTE_KEY_MAX_CONCURRENT, MEMROUTE_KEY_RPM).
ALTER TABLE api_keys ADD COLUMN max_concurrent INTEGER;       -- upstream calls at once
ALTER TABLE api_keys ADD COLUMN requests_per_minute INTEGER;  -- 0: no per-minute limit

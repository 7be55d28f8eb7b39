-- Wrong admin tokens of the last minute, where every replica counts them: the dashboard
-- login's and the API's throttle (memroute/web/throttle.py) holds its limits across all
-- replicas together, not per replica. Rows older than the window are deleted as new ones
-- come.
CREATE TABLE admin_failures (
    at      double precision NOT NULL,  -- Unix time
    address text COLLATE "C" NOT NULL
);
CREATE INDEX admin_failures_at ON admin_failures (at);
CREATE INDEX admin_failures_address ON admin_failures (address, at);

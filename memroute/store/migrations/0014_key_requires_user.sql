-- A key that serves many end users may require each request to name one (the header
-- x-memroute-user-id, or the body's user / safety_identifier / metadata.user_id): a
-- request without one then gets no memory, so no user ever shares the key's own.
ALTER TABLE api_keys ADD COLUMN requires_user_id INTEGER NOT NULL DEFAULT 0;

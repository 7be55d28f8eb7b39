-- The wire format a provider speaks: 'openai' (chat completions, responses) or
-- 'anthropic' (messages). Each gateway route forwards only to providers of its format.
ALTER TABLE providers ADD COLUMN format TEXT NOT NULL DEFAULT 'openai'
    CHECK (format IN ('openai', 'anthropic'));

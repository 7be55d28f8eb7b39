-- The newest facts of a key without its kept chat turns: retrieval fills an unused budget
-- with them. A partial index, so the fill never walks the turns (thousands in a long
-- conversation) and a kept turn's insert does not maintain it. Queries must say
-- `substr(key, 1, 5) <> 'turn:'` word for word to use it (memroute/store/memories.py).
CREATE INDEX idx_memories_owner_updated_facts ON memories (api_key_id, updated_at)
    WHERE substr(key, 1, 5) <> 'turn:';

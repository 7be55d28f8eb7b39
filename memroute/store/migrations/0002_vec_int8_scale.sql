-- The scale that maps unit-vector components to int8 for a quantised vec_memories
-- (fitted to the first vectors stored after a reset; NULL until then).
ALTER TABLE memory_vec_meta ADD COLUMN int8_scale REAL;

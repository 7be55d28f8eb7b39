-- What a queued chat turn is for and where it came from: `capture` keeps its text as the
-- speaker's episodes, `facts` extracts facts from it; `request_id` and `speaker` (the
-- OpenAI `name` field) are recorded on what is learned.
ALTER TABLE extraction_jobs ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE extraction_jobs ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
ALTER TABLE extraction_jobs ADD COLUMN capture INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_jobs ADD COLUMN facts INTEGER NOT NULL DEFAULT 1;


-- `AFTER UPDATE OF col` fires whenever a column is in the SET list, even with its old value, so
-- every status change re-indexed the row. Re-index only when indexed text really changed.
DROP TRIGGER IF EXISTS `reminders_fts_au`;
--> statement-breakpoint
CREATE TRIGGER `reminders_fts_au` AFTER UPDATE OF title, body, context_tags, trigger_pattern, doc_id ON `reminders`
WHEN old.title IS NOT new.title OR old.body IS NOT new.body OR old.context_tags IS NOT new.context_tags
	OR old.trigger_pattern IS NOT new.trigger_pattern OR old.doc_id IS NOT new.doc_id
BEGIN
	INSERT INTO reminders_fts(reminders_fts, rowid, title, body, context_tags, trigger_pattern)
	VALUES ('delete', old.doc_id, old.title, old.body, old.context_tags, old.trigger_pattern);
	INSERT INTO reminders_fts(rowid, title, body, context_tags, trigger_pattern)
	VALUES (new.doc_id, new.title, new.body, new.context_tags, new.trigger_pattern);
END;

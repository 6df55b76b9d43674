-- Turn start looks for context reminders whose pattern or tags share a word with the user
-- message. On `reminders_fts` that query walks the doclists of every message word through all
-- titles and bodies (a 30-word message: ~1 ms for a dozen hits). This index holds only context
-- reminders' tags and pattern, so it stays as small as they are. Contentless with
-- contentless_delete: rows are deleted by rowid (doc_id), and nothing is stored twice.
CREATE VIRTUAL TABLE `reminder_context_fts` USING fts5(
	context_tags, trigger_pattern,
	content='', contentless_delete=1,
	tokenize='porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `reminder_context_fts_ai` AFTER INSERT ON `reminders` WHEN new.trigger_type = 'context' BEGIN
	INSERT INTO reminder_context_fts(rowid, context_tags, trigger_pattern)
	VALUES (new.doc_id, new.context_tags, new.trigger_pattern);
END;
--> statement-breakpoint
CREATE TRIGGER `reminder_context_fts_ad` AFTER DELETE ON `reminders` WHEN old.trigger_type = 'context' BEGIN
	DELETE FROM reminder_context_fts WHERE rowid = old.doc_id;
END;
--> statement-breakpoint
-- Status changes leave the index alone; a change of type, tags, pattern or doc_id re-indexes.
CREATE TRIGGER `reminder_context_fts_au` AFTER UPDATE OF trigger_type, context_tags, trigger_pattern, doc_id ON `reminders`
WHEN old.trigger_type IS NOT new.trigger_type OR old.context_tags IS NOT new.context_tags
	OR old.trigger_pattern IS NOT new.trigger_pattern OR old.doc_id IS NOT new.doc_id
BEGIN
	DELETE FROM reminder_context_fts WHERE rowid = old.doc_id AND old.trigger_type = 'context';
	INSERT INTO reminder_context_fts(rowid, context_tags, trigger_pattern)
	SELECT new.doc_id, new.context_tags, new.trigger_pattern WHERE new.trigger_type = 'context';
END;
--> statement-breakpoint
INSERT INTO reminder_context_fts(rowid, context_tags, trigger_pattern)
	SELECT doc_id, context_tags, trigger_pattern FROM reminders WHERE trigger_type = 'context';

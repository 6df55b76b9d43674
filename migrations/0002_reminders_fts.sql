-- Full-text index over reminders (title, body, tags, context pattern) for search and context
-- triggers. External content: the text lives once, in `reminders`; triggers keep the index in
-- step. Only edits to indexed columns touch it, so status changes cost nothing here.
CREATE VIRTUAL TABLE `reminders_fts` USING fts5(
	title, body, context_tags, trigger_pattern,
	content='reminders', content_rowid='doc_id',
	tokenize='porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `reminders_fts_ai` AFTER INSERT ON `reminders` BEGIN
	INSERT INTO reminders_fts(rowid, title, body, context_tags, trigger_pattern)
	VALUES (new.doc_id, new.title, new.body, new.context_tags, new.trigger_pattern);
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_fts_ad` AFTER DELETE ON `reminders` BEGIN
	INSERT INTO reminders_fts(reminders_fts, rowid, title, body, context_tags, trigger_pattern)
	VALUES ('delete', old.doc_id, old.title, old.body, old.context_tags, old.trigger_pattern);
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_fts_au` AFTER UPDATE OF title, body, context_tags, trigger_pattern, doc_id ON `reminders` BEGIN
	INSERT INTO reminders_fts(reminders_fts, rowid, title, body, context_tags, trigger_pattern)
	VALUES ('delete', old.doc_id, old.title, old.body, old.context_tags, old.trigger_pattern);
	INSERT INTO reminders_fts(rowid, title, body, context_tags, trigger_pattern)
	VALUES (new.doc_id, new.title, new.body, new.context_tags, new.trigger_pattern);
END;
--> statement-breakpoint
INSERT INTO reminders_fts(reminders_fts) VALUES ('rebuild');

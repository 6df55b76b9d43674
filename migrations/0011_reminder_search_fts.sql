-- Search gets its own index, shaped for cheap BM25 scoring. On `reminders_fts` every scored row
-- cost a `%_docsize` lookup (bm25 reads the row's length): ~0.9 µs of ~1.2 µs per matched row.
-- Here `columnsize=0` on a contentless table stores no lengths, so bm25 sees every column as
-- length -1 and its length normalisation becomes a constant; ReminderSearch rescales the column
-- weights per query so the score is exactly BM25 with b = 0 (no document-length penalty).
-- Tags and pattern share one column: both had weight 4, and bm25 sums weights per hit, so the
-- merge ranks the same. `pad` holds 16 private-use tokens per row (folded to an empty term that
-- no query word can name); they only lift the average length bm25 divides by, which keeps its
-- length factor positive however short the reminders are (see reminder-search.ts).
-- Contentless: deletes replay the old values through the 'delete' command, as before.
CREATE VIRTUAL TABLE `reminder_search_fts` USING fts5(
	title, body, tags, pad,
	content='', columnsize=0,
	tokenize='porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `reminder_search_fts_ai` AFTER INSERT ON `reminders` BEGIN
	INSERT INTO reminder_search_fts(rowid, title, body, tags, pad)
	VALUES (new.doc_id, new.title, new.body, new.context_tags || ' ' || ifnull(new.trigger_pattern, ''),
		replace('- - - - - - - - - - - - - - - -', '-', char(57344)));
END;
--> statement-breakpoint
CREATE TRIGGER `reminder_search_fts_ad` AFTER DELETE ON `reminders` BEGIN
	INSERT INTO reminder_search_fts(reminder_search_fts, rowid, title, body, tags, pad)
	VALUES ('delete', old.doc_id, old.title, old.body, old.context_tags || ' ' || ifnull(old.trigger_pattern, ''),
		replace('- - - - - - - - - - - - - - - -', '-', char(57344)));
END;
--> statement-breakpoint
CREATE TRIGGER `reminder_search_fts_au` AFTER UPDATE OF title, body, context_tags, trigger_pattern, doc_id ON `reminders`
WHEN old.title IS NOT new.title OR old.body IS NOT new.body OR old.context_tags IS NOT new.context_tags
	OR old.trigger_pattern IS NOT new.trigger_pattern OR old.doc_id IS NOT new.doc_id
BEGIN
	INSERT INTO reminder_search_fts(reminder_search_fts, rowid, title, body, tags, pad)
	VALUES ('delete', old.doc_id, old.title, old.body, old.context_tags || ' ' || ifnull(old.trigger_pattern, ''),
		replace('- - - - - - - - - - - - - - - -', '-', char(57344)));
	INSERT INTO reminder_search_fts(rowid, title, body, tags, pad)
	VALUES (new.doc_id, new.title, new.body, new.context_tags || ' ' || ifnull(new.trigger_pattern, ''),
		replace('- - - - - - - - - - - - - - - -', '-', char(57344)));
END;
--> statement-breakpoint
INSERT INTO reminder_search_fts(rowid, title, body, tags, pad)
	SELECT doc_id, title, body, context_tags || ' ' || ifnull(trigger_pattern, ''),
		replace('- - - - - - - - - - - - - - - -', '-', char(57344))
	FROM reminders;
--> statement-breakpoint
-- The old index served search and (before 0010) context triggers; nothing reads it now.
DROP TRIGGER `reminders_fts_ai`;
--> statement-breakpoint
DROP TRIGGER `reminders_fts_ad`;
--> statement-breakpoint
DROP TRIGGER `reminders_fts_au`;
--> statement-breakpoint
DROP TABLE `reminders_fts`;

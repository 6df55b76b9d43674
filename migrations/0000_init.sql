CREATE TABLE `agent_daily_spend` (
	`agent_id` text NOT NULL,
	`day` text NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `day`),
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_agent_idx` ON `api_keys` (`agent_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`agent_id` text,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`body_hash` text NOT NULL,
	`status` integer NOT NULL,
	`response_body` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`scope`, `key`),
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `agent_settings` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`quiet_start` text,
	`quiet_end` text,
	`max_reminders` integer DEFAULT 100 NOT NULL,
	`injection_budget_tokens` integer DEFAULT 1500 NOT NULL,
	`session_defaults` text DEFAULT '{}' NOT NULL,
	`hooks` text DEFAULT '{}' NOT NULL,
	`daily_budget` text DEFAULT '{}' NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `reminder_doc_blocks` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`num` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reminder_doc_blocks_num_unique` ON `reminder_doc_blocks` (`num`);--> statement-breakpoint
CREATE TABLE `reminders` (
	`id` text PRIMARY KEY NOT NULL,
	`doc_id` integer NOT NULL,
	`agent_id` text NOT NULL,
	`session_id` text,
	`title` text NOT NULL,
	`body` text DEFAULT '' NOT NULL,
	`trigger_type` text NOT NULL,
	`trigger_at` integer,
	`trigger_cron` text,
	`trigger_timezone` text,
	`trigger_pattern` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`priority` text DEFAULT 'normal' NOT NULL,
	`context_tags` text DEFAULT '[]' NOT NULL,
	`quiet_hours_exempt` integer DEFAULT false NOT NULL,
	`missed_policy` text DEFAULT 'once' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`triggered_at` integer,
	`completed_at` integer,
	`snooze_until` integer,
	`last_fired_at` integer,
	`next_fire_at` integer,
	`claimed_until` integer,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "reminders_trigger_type_check" CHECK("reminders"."trigger_type" IN ('scheduled', 'recurring', 'context')),
	CONSTRAINT "reminders_status_check" CHECK("reminders"."status" IN ('pending', 'triggered', 'completed', 'dismissed', 'snoozed')),
	CONSTRAINT "reminders_priority_check" CHECK("reminders"."priority" IN ('urgent', 'normal', 'low')),
	CONSTRAINT "reminders_missed_policy_check" CHECK("reminders"."missed_policy" IN ('once', 'skip', 'all'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reminders_doc_id_unique` ON `reminders` (`doc_id`);--> statement-breakpoint
CREATE INDEX `reminders_next_fire_idx` ON `reminders` (`next_fire_at`) WHERE "reminders"."next_fire_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `reminders_agent_due_idx` ON `reminders` (`agent_id`,`next_fire_at`) WHERE "reminders"."next_fire_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `reminders_agent_id_idx` ON `reminders` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `reminders_agent_status_idx` ON `reminders` (`agent_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `reminders_agent_priority_idx` ON `reminders` (`agent_id`,`priority`,`id`);--> statement-breakpoint
CREATE INDEX `reminders_agent_trigger_idx` ON `reminders` (`agent_id`,`trigger_type`,`id`);--> statement-breakpoint
CREATE INDEX `reminders_session_idx` ON `reminders` (`session_id`) WHERE "reminders"."session_id" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`message_id` text NOT NULL,
	`event_type` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	`next_attempt_at` integer,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`message_id`) REFERENCES `webhook_messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_webhook_idx` ON `webhook_attempts` (`webhook_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`message_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`claimed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `webhook_messages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_message_webhook_uq` ON `webhook_deliveries` (`message_id`,`webhook_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`state`);--> statement-breakpoint
CREATE TABLE `webhook_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_messages_agent_idx` ON `webhook_messages` (`agent_id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`url` text NOT NULL,
	`event_types` text DEFAULT '[]' NOT NULL,
	`description` text,
	`status` text DEFAULT 'active' NOT NULL,
	`disabled_reason` text,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_agent_idx` ON `webhooks` (`agent_id`,`id`);--> statement-breakpoint
CREATE TABLE `reminder_fires` (
	`reminder_id` text NOT NULL,
	`scheduled_for` integer NOT NULL,
	`agent_id` text NOT NULL,
	`message_id` text NOT NULL,
	`fired_at` integer NOT NULL,
	`late` integer NOT NULL,
	PRIMARY KEY(`reminder_id`, `scheduled_for`),
	FOREIGN KEY (`reminder_id`) REFERENCES `reminders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `reminder_holds` (
	`reminder_id` text PRIMARY KEY NOT NULL,
	`scheduled_for` integer NOT NULL,
	`held_at` integer NOT NULL,
	FOREIGN KEY (`reminder_id`) REFERENCES `reminders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `drift_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`step_number` integer NOT NULL,
	`similarity` real NOT NULL,
	`action_text` text NOT NULL,
	`severity` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `drift_events_session_idx` ON `drift_events` (`session_id`,`seq`);--> statement-breakpoint
CREATE TABLE `session_snapshots` (
	`session_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`snapshot` text NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`goal` text NOT NULL,
	`plan` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`config` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`state` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`external_id` text,
	`parent_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_agent_status_idx` ON `sessions` (`agent_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `sessions_agent_id_idx` ON `sessions` (`agent_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_agent_external_idx` ON `sessions` (`agent_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `sessions_agent_parent_idx` ON `sessions` (`agent_id`,`parent_id`);--> statement-breakpoint
CREATE TABLE `steps` (
	`session_id` text NOT NULL,
	`step_number` integer NOT NULL,
	`agent_id` text NOT NULL,
	`description` text NOT NULL,
	`output` text DEFAULT '' NOT NULL,
	`verification` text NOT NULL,
	`drift` text NOT NULL,
	`recommended_action` text NOT NULL,
	`created_at` integer NOT NULL,
	`version` integer NOT NULL,
	`tool` text,
	`error` integer,
	`tokens` integer,
	`cost_usd` real,
	PRIMARY KEY(`session_id`, `step_number`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `otlp_records` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`conversation` text NOT NULL,
	`key` text NOT NULL,
	`kind` text NOT NULL,
	`payload` text,
	`state` integer DEFAULT 0 NOT NULL,
	`step_number` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `otlp_records_key_idx` ON `otlp_records` (`agent_id`,`conversation`,`key`);--> statement-breakpoint
CREATE INDEX `otlp_records_waiting_idx` ON `otlp_records` (`agent_id`,`conversation`,`seq`) WHERE "otlp_records"."state" = 0;--> statement-breakpoint
-- Hand-written from here on: what drizzle-kit does not generate (FTS5 tables and triggers). A later
-- drizzle-kit migration that rebuilds `reminders` or `sessions` (SQLite cannot alter a column in
-- place) drops their triggers: such a migration must create them again.
-- Turn start looks for context reminders whose pattern or tags share a word with the user
-- message. This index holds only context reminders' tags and pattern, so it stays as small as they
-- are (an index over all titles and bodies walked every message word's doclist through them:
-- ~1 ms for a dozen hits on a 30-word message). Contentless with contentless_delete: rows are
-- deleted by rowid (doc_id), and nothing is stored twice.
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
-- Status changes leave the index alone (`AFTER UPDATE OF col` fires whenever a column is in the
-- SET list, even with its old value); a change of type, tags, pattern or doc_id re-indexes.
CREATE TRIGGER `reminder_context_fts_au` AFTER UPDATE OF trigger_type, context_tags, trigger_pattern, doc_id ON `reminders`
WHEN old.trigger_type IS NOT new.trigger_type OR old.context_tags IS NOT new.context_tags
	OR old.trigger_pattern IS NOT new.trigger_pattern OR old.doc_id IS NOT new.doc_id
BEGIN
	DELETE FROM reminder_context_fts WHERE rowid = old.doc_id AND old.trigger_type = 'context';
	INSERT INTO reminder_context_fts(rowid, context_tags, trigger_pattern)
	SELECT new.doc_id, new.context_tags, new.trigger_pattern WHERE new.trigger_type = 'context';
END;
--> statement-breakpoint
-- Search, shaped for cheap BM25 scoring. With the default `columnsize` every scored row cost a
-- `%_docsize` lookup (bm25 reads the row's length): ~0.9 µs of ~1.2 µs per matched row.
-- Here `columnsize=0` on a contentless table stores no lengths, so bm25 sees every column as
-- length -1 and its length normalisation becomes a constant; ReminderSearch rescales the column
-- weights per query so the score is exactly BM25 with b = 0 (no document-length penalty).
-- Tags and pattern share one column (both weigh the same, and bm25 sums weights per hit).
-- `pad` holds 16 private-use tokens per row (folded to an empty term that no query word can
-- name); they only lift the average length bm25 divides by, which keeps its length factor
-- positive however short the reminders are (see src/reminders/search.ts).
-- Contentless: deletes replay the old values through the 'delete' command.
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
-- A reminder's session_id names one of its agent's own sessions (checked on write). Deleting the
-- session unlinks its reminders, as ON DELETE SET NULL would: they stay the agent's reminders,
-- without an id that now answers 404 (PostgreSQL's schema says the same with a foreign key).
CREATE TRIGGER `sessions_unlink_reminders` AFTER DELETE ON `sessions` BEGIN
	UPDATE reminders SET session_id = NULL WHERE session_id = old.id AND agent_id = old.agent_id;
END;

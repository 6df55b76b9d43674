CREATE INDEX `reminders_session_idx` ON `reminders` (`session_id`) WHERE "reminders"."session_id" IS NOT NULL;
--> statement-breakpoint
-- A reminder's session_id names one of its agent's own sessions (checked on write). Deleting the
-- session unlinks its reminders, as ON DELETE SET NULL would: they stay the agent's reminders,
-- without an id that now answers 404. (Adding a real foreign key would rebuild `reminders` and
-- drop its FTS triggers.)
CREATE TRIGGER `sessions_unlink_reminders` AFTER DELETE ON `sessions` BEGIN
	UPDATE reminders SET session_id = NULL WHERE session_id = old.id AND agent_id = old.agent_id;
END;
--> statement-breakpoint
-- Links stored before the check existed (an unknown id, another agent's session, a deleted one)
-- are dropped: no reminder may point at a session its agent cannot see.
UPDATE reminders SET session_id = NULL WHERE session_id IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = reminders.session_id AND s.agent_id = reminders.agent_id);

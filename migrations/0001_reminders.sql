CREATE TABLE `agent_settings` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`quiet_start` text,
	`quiet_end` text,
	`max_reminders` integer DEFAULT 100 NOT NULL,
	`injection_budget_tokens` integer DEFAULT 1500 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
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
CREATE INDEX `reminders_agent_trigger_idx` ON `reminders` (`agent_id`,`trigger_type`,`id`);
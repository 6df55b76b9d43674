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
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`goal` text NOT NULL,
	`plan` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`config` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`state` text NOT NULL,
	`snapshot` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_agent_status_idx` ON `sessions` (`agent_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `sessions_agent_id_idx` ON `sessions` (`agent_id`,`id`);--> statement-breakpoint
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
	PRIMARY KEY(`session_id`, `step_number`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);

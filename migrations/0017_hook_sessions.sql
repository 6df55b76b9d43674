ALTER TABLE `agent_settings` ADD `session_defaults` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `agent_settings` ADD `hooks` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_agent_external_idx` ON `sessions` (`agent_id`,`external_id`);
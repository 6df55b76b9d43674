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
CREATE INDEX `otlp_records_waiting_idx` ON `otlp_records` (`agent_id`,`conversation`,`seq`) WHERE "otlp_records"."state" = 0;
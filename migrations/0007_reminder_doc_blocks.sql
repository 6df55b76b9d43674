CREATE TABLE `reminder_doc_blocks` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`num` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reminder_doc_blocks_num_unique` ON `reminder_doc_blocks` (`num`);
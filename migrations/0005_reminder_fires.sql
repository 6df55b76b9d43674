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

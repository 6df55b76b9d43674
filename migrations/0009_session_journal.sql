CREATE TABLE `session_ops` (
	`session_id` text NOT NULL,
	`version` integer NOT NULL,
	`at` integer NOT NULL,
	`op` text NOT NULL,
	PRIMARY KEY(`session_id`, `version`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `session_snapshots` (
	`session_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`snapshot` text NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Hand-added: existing sessions keep their engine state (the snapshot is as of the row's version).
INSERT INTO `session_snapshots` (`session_id`, `version`, `snapshot`) SELECT `id`, `version`, `snapshot` FROM `sessions`;
--> statement-breakpoint
ALTER TABLE `sessions` DROP COLUMN `snapshot`;

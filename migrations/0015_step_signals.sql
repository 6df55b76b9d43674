ALTER TABLE `steps` ADD `tool` text;--> statement-breakpoint
ALTER TABLE `steps` ADD `error` integer;--> statement-breakpoint
ALTER TABLE `steps` ADD `tokens` integer;--> statement-breakpoint
ALTER TABLE `steps` ADD `cost_usd` real;
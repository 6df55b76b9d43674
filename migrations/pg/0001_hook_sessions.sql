ALTER TABLE "agent_settings" ADD COLUMN "session_defaults" text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_settings" ADD COLUMN "hooks" text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "external_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_agent_external_idx" ON "sessions" USING btree ("agent_id","external_id");
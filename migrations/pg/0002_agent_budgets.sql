CREATE TABLE "agent_daily_spend" (
	"agent_id" text NOT NULL,
	"day" text NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "agent_daily_spend_agent_id_day_pk" PRIMARY KEY("agent_id","day")
);
--> statement-breakpoint
ALTER TABLE "agent_settings" ADD COLUMN "daily_budget" text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "parent_id" text;--> statement-breakpoint
ALTER TABLE "agent_daily_spend" ADD CONSTRAINT "agent_daily_spend_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_agent_parent_idx" ON "sessions" USING btree ("agent_id","parent_id");
CREATE TABLE "agent_daily_spend" (
	"agent_id" text NOT NULL,
	"day" text NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "agent_daily_spend_agent_id_day_pk" PRIMARY KEY("agent_id","day")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"agent_id" text,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"body_hash" text NOT NULL,
	"status" integer NOT NULL,
	"response_body" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	"window_ends" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_settings" (
	"agent_id" text PRIMARY KEY NOT NULL,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"quiet_start" text,
	"quiet_end" text,
	"max_reminders" integer DEFAULT 100 NOT NULL,
	"injection_budget_tokens" integer DEFAULT 1500 NOT NULL,
	"session_defaults" text DEFAULT '{}' NOT NULL,
	"hooks" text DEFAULT '{}' NOT NULL,
	"daily_budget" text DEFAULT '{}' NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reminder_fires" (
	"reminder_id" text NOT NULL,
	"scheduled_for" bigint NOT NULL,
	"agent_id" text NOT NULL,
	"message_id" text NOT NULL,
	"fired_at" bigint NOT NULL,
	"late" boolean NOT NULL,
	CONSTRAINT "reminder_fires_reminder_id_scheduled_for_pk" PRIMARY KEY("reminder_id","scheduled_for")
);
--> statement-breakpoint
CREATE TABLE "reminder_holds" (
	"reminder_id" text PRIMARY KEY NOT NULL,
	"scheduled_for" bigint NOT NULL,
	"held_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reminders" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"session_id" text,
	"title" text NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"trigger_type" text NOT NULL,
	"trigger_at" bigint,
	"trigger_cron" text,
	"trigger_timezone" text,
	"trigger_pattern" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"priority" text DEFAULT 'normal' NOT NULL,
	"context_tags" text DEFAULT '[]' NOT NULL,
	"quiet_hours_exempt" boolean DEFAULT false NOT NULL,
	"missed_policy" text DEFAULT 'once' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"triggered_at" bigint,
	"completed_at" bigint,
	"snooze_until" bigint,
	"last_fired_at" bigint,
	"next_fire_at" bigint,
	"claimed_until" bigint,
	"search_doc" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, body), 'B') || setweight(to_tsvector('english'::regconfig, context_tags || ' ' || coalesce(trigger_pattern, '')), 'C')) STORED NOT NULL,
	"context_doc" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, context_tags || ' ' || coalesce(trigger_pattern, ''))) STORED NOT NULL,
	CONSTRAINT "reminders_trigger_type_check" CHECK ("reminders"."trigger_type" IN ('scheduled', 'recurring', 'context')),
	CONSTRAINT "reminders_status_check" CHECK ("reminders"."status" IN ('pending', 'triggered', 'completed', 'dismissed', 'snoozed')),
	CONSTRAINT "reminders_priority_check" CHECK ("reminders"."priority" IN ('urgent', 'normal', 'low')),
	CONSTRAINT "reminders_missed_policy_check" CHECK ("reminders"."missed_policy" IN ('once', 'skip', 'all'))
);
--> statement-breakpoint
CREATE TABLE "drift_events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"step_number" integer NOT NULL,
	"similarity" double precision NOT NULL,
	"action_text" text NOT NULL,
	"severity" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_snapshots" (
	"session_id" text PRIMARY KEY NOT NULL,
	"version" integer NOT NULL,
	"snapshot" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"goal" text NOT NULL,
	"plan" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"config" text NOT NULL,
	"metadata" text DEFAULT '{}' NOT NULL,
	"state" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"external_id" text,
	"parent_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "steps" (
	"session_id" text NOT NULL,
	"step_number" integer NOT NULL,
	"agent_id" text NOT NULL,
	"description" text NOT NULL,
	"output" text DEFAULT '' NOT NULL,
	"verification" text NOT NULL,
	"drift" text NOT NULL,
	"recommended_action" text NOT NULL,
	"created_at" bigint NOT NULL,
	"version" integer NOT NULL,
	"tool" text,
	"error" boolean,
	"tokens" integer,
	"cost_usd" double precision,
	CONSTRAINT "steps_session_id_step_number_pk" PRIMARY KEY("session_id","step_number")
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"message_id" text NOT NULL,
	"event_type" text NOT NULL,
	"attempt" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"next_attempt_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"message_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint,
	"claimed_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_messages" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text DEFAULT '[]' NOT NULL,
	"description" text,
	"status" text DEFAULT 'active' NOT NULL,
	"disabled_reason" text,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" bigint,
	"failing_since" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "otlp_records" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"conversation" text NOT NULL,
	"key" text NOT NULL,
	"kind" text NOT NULL,
	"payload" text,
	"state" integer DEFAULT 0 NOT NULL,
	"step_number" integer,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_daily_spend" ADD CONSTRAINT "agent_daily_spend_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_settings" ADD CONSTRAINT "agent_settings_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reminder_fires" ADD CONSTRAINT "reminder_fires_reminder_id_reminders_id_fk" FOREIGN KEY ("reminder_id") REFERENCES "public"."reminders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reminder_holds" ADD CONSTRAINT "reminder_holds_reminder_id_reminders_id_fk" FOREIGN KEY ("reminder_id") REFERENCES "public"."reminders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reminders" ADD CONSTRAINT "reminders_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reminders" ADD CONSTRAINT "reminders_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "drift_events" ADD CONSTRAINT "drift_events_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_snapshots" ADD CONSTRAINT "session_snapshots_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "steps" ADD CONSTRAINT "steps_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_message_id_webhook_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."webhook_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_message_id_webhook_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."webhook_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "otlp_records" ADD CONSTRAINT "otlp_records_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_agent_idx" ON "api_keys" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "rate_limits_window_ends_idx" ON "rate_limits" USING btree ("window_ends");--> statement-breakpoint
CREATE INDEX "reminders_next_fire_idx" ON "reminders" USING btree ("next_fire_at") WHERE "reminders"."next_fire_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "reminders_agent_due_idx" ON "reminders" USING btree ("agent_id","next_fire_at") WHERE "reminders"."next_fire_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "reminders_agent_id_idx" ON "reminders" USING btree ("agent_id","id");--> statement-breakpoint
CREATE INDEX "reminders_agent_status_idx" ON "reminders" USING btree ("agent_id","status","id");--> statement-breakpoint
CREATE INDEX "reminders_agent_priority_idx" ON "reminders" USING btree ("agent_id","priority","id");--> statement-breakpoint
CREATE INDEX "reminders_agent_trigger_idx" ON "reminders" USING btree ("agent_id","trigger_type","id");--> statement-breakpoint
CREATE INDEX "reminders_session_idx" ON "reminders" USING btree ("session_id") WHERE "reminders"."session_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "reminders_search_idx" ON "reminders" USING gin ("search_doc");--> statement-breakpoint
CREATE INDEX "reminders_context_idx" ON "reminders" USING gin ("context_doc") WHERE "reminders"."trigger_type" = 'context';--> statement-breakpoint
CREATE INDEX "drift_events_session_idx" ON "drift_events" USING btree ("session_id","seq");--> statement-breakpoint
CREATE INDEX "sessions_agent_status_idx" ON "sessions" USING btree ("agent_id","status","id");--> statement-breakpoint
CREATE INDEX "sessions_agent_id_idx" ON "sessions" USING btree ("agent_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_agent_external_idx" ON "sessions" USING btree ("agent_id","external_id");--> statement-breakpoint
CREATE INDEX "sessions_agent_parent_idx" ON "sessions" USING btree ("agent_id","parent_id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_webhook_idx" ON "webhook_attempts" USING btree ("webhook_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_message_webhook_uq" ON "webhook_deliveries" USING btree ("message_id","webhook_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","state");--> statement-breakpoint
CREATE INDEX "webhook_messages_agent_idx" ON "webhook_messages" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "webhooks_agent_idx" ON "webhooks" USING btree ("agent_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "otlp_records_key_idx" ON "otlp_records" USING btree ("agent_id","conversation","key");--> statement-breakpoint
CREATE INDEX "otlp_records_waiting_idx" ON "otlp_records" USING btree ("agent_id","conversation","seq") WHERE "otlp_records"."state" = 0;
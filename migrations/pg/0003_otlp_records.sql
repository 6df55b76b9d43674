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
ALTER TABLE "otlp_records" ADD CONSTRAINT "otlp_records_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "otlp_records_key_idx" ON "otlp_records" USING btree ("agent_id","conversation","key");--> statement-breakpoint
CREATE INDEX "otlp_records_waiting_idx" ON "otlp_records" USING btree ("agent_id","conversation","seq") WHERE "otlp_records"."state" = 0;
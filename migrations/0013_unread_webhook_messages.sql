-- Custom SQL migration file, put your code below! --
-- Events no subscription wanted were stored with no delivery; nothing reads them, and new ones are
-- no longer written (src/webhooks/outbox.ts). This drops those already stored.
DELETE FROM `webhook_messages` WHERE `id` NOT IN (SELECT `message_id` FROM `webhook_deliveries`);

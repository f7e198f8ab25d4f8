-- OpenTelemetry (issue 20): the W3C traceparent of the trace that wrote an outbox event (null when
-- tracing was off), carried to the webhook deliveries it causes and sent with their attempts.
ALTER TABLE "outbox_events" ADD COLUMN "traceparent" TEXT;
ALTER TABLE "webhook_deliveries" ADD COLUMN "traceparent" TEXT;

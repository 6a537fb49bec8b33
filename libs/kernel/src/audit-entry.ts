import type { RecordedEvent } from './ports/event-store.port';

/** What every audit shows of an event: its place in the log, when it happened, and who caused it. */
export interface AuditedEvent {
  position: string;
  occurredAt: string;
  stream: string;
  type: string;
  actor: string | null;
  requestId: string | null;
}

/** An audited event with the partner it was written for, the correlation that joins it to others, and its data. */
export interface AttributedEvent extends AuditedEvent {
  partnerId: string | null;
  correlationId: string | null;
  data: unknown;
}

/** `event` as an audit shows it; what its metadata lacks is null. */
export const auditedEvent = (event: RecordedEvent): AuditedEvent => ({
  position: event.position,
  occurredAt: event.metadata.occurredAt,
  stream: event.streamId,
  type: event.type,
  actor: event.metadata.actor ?? null,
  requestId: event.metadata.requestId ?? null,
});

/** `event` as the audit of one resource shows it: {@link auditedEvent} with its partner, correlation and data. */
export function attributedEvent(event: RecordedEvent): AttributedEvent {
  const { position, occurredAt, stream, type, actor, requestId } = auditedEvent(event);
  const partnerId = event.metadata.partnerId ?? null;
  const correlationId = event.metadata.correlationId ?? null;
  // The fields in the order the answers have always listed them.
  return { position, occurredAt, stream, type, actor, partnerId, requestId, correlationId, data: event.data };
}

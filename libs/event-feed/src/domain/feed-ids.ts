import { createHash } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 24);

/** A feed event's id: derived from the log event it comes from, so a rebuild names it alike. */
export const feedEventId = (logEventId: string, type: string) => `evt_${digest(`${logEventId}\n${type}`)}`;

/** A delivery's id: the event, the endpoint, and the log event that asked for it (the event itself, or a redelivery). */
export const deliveryId = (eventId: string, endpointId: string, causeId: string) =>
  `whd_${digest(`${eventId}\n${endpointId}\n${causeId}`)}`;

/** Where an event stands in the feed: its log position, then its place among the feed events of that log event. */
export const feedOrder = (position: string, index: number) => `${position}.${String(index).padStart(2, '0')}`;

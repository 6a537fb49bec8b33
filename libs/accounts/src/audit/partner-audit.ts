import { AuditedEvent, auditedEvent, EventStore, isoInstant, NotFound, RecordedEvent } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { partnerStream } from '../domain/partner/partner.events';

export interface PartnerAuditEntry extends AuditedEvent {
  data: Record<string, unknown>;
}

/** Other streams of a partner's account to audit (its administrators' sign-ins, say), registered by their context. */
export type PartnerAuditSource = (partnerId: string) => Promise<RecordedEvent[]>;

/** Hashes and sealed secrets are facts for the service, not for a reader: left out of what the audit shows. */
const SECRET_FIELD = /hash(es)?$|sealed|secret/i;

function withoutSecrets(data: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries((data ?? {}) as Record<string, unknown>).filter(([field]) => !SECRET_FIELD.test(field)));
}

/**
 * Every event of a partner's credentials and account, in log order, with who caused each: its
 * registration, budgets, keys issued, rotated, renamed and revoked, password rotations, and what
 * other contexts register ({@link PartnerAudit.addSource}). `asOf` cuts the history at an instant.
 */
@Injectable()
export class PartnerAudit {
  private readonly sources: PartnerAuditSource[] = [];

  constructor(private readonly store: EventStore) {}

  addSource(source: PartnerAuditSource): void {
    this.sources.push(source);
  }

  async history(partnerId: string, asOf: Date | null = null): Promise<PartnerAuditEntry[]> {
    const own = await this.store.readStream(partnerStream(partnerId));
    if (own.length === 0) throw new NotFound('partner not found');
    const others = (await Promise.all(this.sources.map((source) => source(partnerId)))).flat();
    const cut = asOf?.toISOString();
    return [...own, ...others]
      .filter((event) => cut === undefined || (isoInstant(event.metadata.occurredAt)?.toISOString() ?? '') <= cut)
      .sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
      .map((event) => ({ ...auditedEvent(event), data: withoutSecrets(event.data) }));
  }
}

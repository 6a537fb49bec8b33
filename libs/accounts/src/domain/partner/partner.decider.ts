import { Decider, DomainCommand, NotFound, ValidationFailed } from '@deals/kernel';
import { PARTNER_ROLES, PartnerEvent, PartnerRateLimitChanged, PartnerRegistered, PartnerRole } from './partner.events';

export type RegisterPartner = DomainCommand<'RegisterPartner', PartnerRegistered['data']>;
export type ChangePartnerRateLimit = DomainCommand<'ChangePartnerRateLimit', PartnerRateLimitChanged['data']>;
export type PartnerCommand = RegisterPartner | ChangePartnerRateLimit;

export interface Partner {
  registered: boolean;
  role: PartnerRole | null;
  requestsPerMinute: number | null;
}

/** The largest budget a partner may be given: a million requests a minute is beyond any one process. */
export const MAX_REQUESTS_PER_MINUTE = 10_000_000;

function rateLimitIssue(requestsPerMinute: number | null | undefined) {
  if (requestsPerMinute === null || requestsPerMinute === undefined) return [];
  if (Number.isSafeInteger(requestsPerMinute) && requestsPerMinute >= 1 && requestsPerMinute <= MAX_REQUESTS_PER_MINUTE) return [];
  return [
    {
      type: 'invalid' as const,
      resource: 'partner',
      field: 'requests_per_minute',
      message: `must be a whole number from 1 to ${MAX_REQUESTS_PER_MINUTE}`,
    },
  ];
}

export const partnerDecider: Decider<Partner, PartnerCommand, PartnerEvent> = {
  initialState: () => ({ registered: false, role: null, requestsPerMinute: null }),
  decide(command, partner) {
    if (command.type === 'ChangePartnerRateLimit') {
      if (!partner.registered) throw new NotFound(`partner ${command.data.partnerId} not found`);
      const issues = rateLimitIssue(command.data.requestsPerMinute);
      if (issues.length) throw new ValidationFailed(issues);
      if (partner.requestsPerMinute === command.data.requestsPerMinute) return [];
      return [{ type: 'PartnerRateLimitChanged', data: command.data }];
    }
    const { name, role } = command.data;
    if (partner.registered) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'partner', field: 'id', message: 'is already registered' }]);
    }
    const issues = [];
    if (!name.trim()) issues.push({ type: 'missing_field' as const, resource: 'partner', field: 'name', message: 'is required' });
    // Printed to operators' terminals and in audits: no control characters (an ESC sequence would drive the terminal).
    else if (name.length > 200 || /\p{Cc}/u.test(name)) {
      issues.push({
        type: 'invalid' as const,
        resource: 'partner',
        field: 'name',
        message: 'must be at most 200 characters, without control characters',
      });
    }
    if (!PARTNER_ROLES.includes(role))
      issues.push({ type: 'invalid' as const, resource: 'partner', field: 'role', message: `must be one of ${PARTNER_ROLES.join(', ')}` });
    issues.push(...rateLimitIssue(command.data.requestsPerMinute));
    if (issues.length) throw new ValidationFailed(issues);
    return [{ type: 'PartnerRegistered', data: command.data }];
  },
  evolve(partner, event) {
    if (event.type === 'PartnerRateLimitChanged') return { ...partner, requestsPerMinute: event.data.requestsPerMinute };
    return { registered: true, role: event.data.role, requestsPerMinute: event.data.requestsPerMinute ?? null };
  },
};

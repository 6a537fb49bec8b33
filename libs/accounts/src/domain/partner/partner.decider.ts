import { Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { PARTNER_ROLES, PartnerEvent, PartnerRegistered, PartnerRole } from './partner.events';

export type RegisterPartner = DomainCommand<'RegisterPartner', PartnerRegistered['data']>;

export interface Partner {
  registered: boolean;
  role: PartnerRole | null;
}

export const partnerDecider: Decider<Partner, RegisterPartner, PartnerEvent> = {
  initialState: () => ({ registered: false, role: null }),
  decide(command, partner) {
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
    if (issues.length) throw new ValidationFailed(issues);
    return [{ type: 'PartnerRegistered', data: command.data }];
  },
  evolve(_partner, event) {
    return { registered: true, role: event.data.role };
  },
};

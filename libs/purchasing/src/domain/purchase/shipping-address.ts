import type { ValidationIssue } from '@deals/kernel';

/** The full purchase's shipping address. */
export interface ShippingAddress {
  id: string;
  name: string;
  address_one: string;
  address_two: string | null;
  postal_code: string;
  city: string;
  state: string;
  country: string;
}

/** Checks a shipping address as sent; every problem is one entry on `shipping_address`. */
export function readShippingAddress(input: unknown, id: string): { address: ShippingAddress | null; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const fail = (field: string, message: string, type: ValidationIssue['type'] = 'invalid') =>
    issues.push({ type, message, resource: 'shipping_address', field });
  if (!input || typeof input !== 'object' || Array.isArray(input))
    return (fail('shipping_address', 'must be an object'), { address: null, issues });
  const a = input as Record<string, unknown>;
  const text = (field: string, required = true) => {
    const v = a[field];
    if (v === undefined || v === null || v === '') return required ? (fail(field, 'is required', 'missing_field'), '') : null;
    if (typeof v !== 'string' || v.length > 200) return (fail(field, 'must be text of at most 200 characters'), '');
    return v.trim();
  };
  const address: ShippingAddress = {
    id,
    name: text('name')!,
    address_one: text('address_one')!,
    address_two: text('address_two', false),
    postal_code: text('postal_code')!,
    city: text('city')!,
    state: text('state')!,
    country: text('country')!,
  };
  if (address.state && !/^[A-Za-z]{2}$/.test(address.state)) fail('state', 'must be two letters');
  if (address.country && !/^[A-Za-z]{2}$/.test(address.country)) fail('country', 'must be two letters');
  return {
    address: issues.length ? null : { ...address, state: address.state.toUpperCase(), country: address.country.toUpperCase() },
    issues,
  };
}

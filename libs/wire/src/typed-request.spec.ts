import { z } from 'zod';
import { validationIssues } from './typed-request';

describe('validationIssues', () => {
  const body = z
    .object({
      deal_id: z.string({ error: 'is required' }),
      user: z
        .object(
          { email: z.string({ error: 'is required' }), names: z.object({ first: z.string({ error: 'must be text' }) }) },
          { error: 'give a user' },
        )
        .optional()
        .meta({ 'x-resource': 'user', 'x-section': true }),
      shipping: z.object({ city: z.string({ error: 'is required' }) }).meta({ 'x-resource': 'shipping_address' }),
    })
    .meta({ 'x-resource': 'purchase' });
  const issues = (input: unknown) => {
    const parsed = body.safeParse(input);
    return parsed.success ? [] : validationIssues(parsed.error, body);
  };

  it('names a field by its path, with the resource of the nearest schema that declares one', () => {
    expect(issues({ user: { email: 'a@b.co', names: { first: 'A' } }, shipping: {} })).toEqual([
      { type: 'missing_field', resource: 'purchase', field: 'deal_id', message: 'is required' },
      { type: 'missing_field', resource: 'shipping_address', field: 'shipping.city', message: 'is required' },
    ]);
  });

  it("names a section's fields from the section (x-section), and an entry on the section by the section's name", () => {
    expect(issues({ deal_id: 'd', user: { names: { first: 5 } }, shipping: { city: 'C' } })).toEqual([
      { type: 'missing_field', resource: 'user', field: 'email', message: 'is required' },
      { type: 'invalid', resource: 'user', field: 'names.first', message: 'must be text' },
    ]);
    expect(issues({ deal_id: 'd', user: 'someone', shipping: { city: 'C' } })).toEqual([
      { type: 'invalid', resource: 'user', field: 'user', message: 'give a user' },
    ]);
  });
});

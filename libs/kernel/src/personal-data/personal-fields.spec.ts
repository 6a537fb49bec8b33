import { randomBytes } from 'node:crypto';
import { openPersonalData, PERSONAL_ENVELOPE, PersonalFields, sealPersonalData } from './personal-fields';

describe('personal data sealed in an event', () => {
  const fields: PersonalFields = new Map([
    [
      'UserRegistered',
      {
        owner: (data) => data.userId as string,
        paths: [
          ['profile', 'email'],
          ['profile', 'firstName'],
          ['profile', 'partnerData'],
        ],
      },
    ],
  ]);
  const key = randomBytes(32);
  const event = {
    id: 'e-1',
    type: 'UserRegistered',
    data: {
      userId: 'u-1',
      profile: { email: 'zoe@example.com', firstName: 'Zoë', lastName: null, partnerData: { tier: 'gold' }, token: 't' },
    },
  };

  it('moves the values into a box, leaving their places null, and opens them back', () => {
    const sealed = sealPersonalData(fields, event, key);
    expect(JSON.stringify(sealed)).not.toMatch(/zoe@example|Zoë|gold/);
    expect(sealed.data).toMatchObject({
      userId: 'u-1',
      profile: { email: null, firstName: null, lastName: null, partnerData: null, token: 't' },
      [PERSONAL_ENVELOPE]: { owner: 'u-1', paths: ['profile.email', 'profile.firstName', 'profile.partnerData'] },
    });
    expect(openPersonalData(sealed, key)).toEqual(event);
    // The caller's event is left as it was.
    expect(event.data.profile.email).toBe('zoe@example.com');
  });

  it('reads as erased without the key: the values gone, the rest kept', () => {
    const opened = openPersonalData(sealPersonalData(fields, event, key), null);
    expect(opened.data).toEqual({
      userId: 'u-1',
      profile: { email: null, firstName: null, lastName: null, partnerData: null, token: 't' },
    });
  });

  it('writes no personal values of an erased owner (no key): their places null, no box', () => {
    const dropped = sealPersonalData(fields, event, null);
    expect(dropped.data).toEqual({
      userId: 'u-1',
      profile: { email: null, firstName: null, lastName: null, partnerData: null, token: 't' },
    });
  });

  it('refuses a box opened with another key, or moved to another event', () => {
    const sealed = sealPersonalData(fields, event, key);
    expect(() => openPersonalData(sealed, randomBytes(32))).toThrow();
    expect(() => openPersonalData({ ...sealed, id: 'e-2' }, key)).toThrow();
    // Its paths changed (values put in other fields), or its tag cut short.
    const envelope = (sealed.data as unknown as Record<string, { paths: string[]; box: string }>)[PERSONAL_ENVELOPE];
    const moved = { ...envelope, paths: [...envelope.paths].reverse() };
    expect(() => openPersonalData({ ...sealed, data: { ...sealed.data, [PERSONAL_ENVELOPE]: moved } }, key)).toThrow();
    const short = { ...envelope, box: Buffer.from(envelope.box, 'base64').subarray(0, -12).toString('base64') };
    expect(() => openPersonalData({ ...sealed, data: { ...sealed.data, [PERSONAL_ENVELOPE]: short } }, key)).toThrow();
  });

  it('leaves an event without personal data, or of another type, as it is', () => {
    const bare = { ...event, data: { userId: 'u-1', profile: { email: null } } };
    expect(sealPersonalData(fields, bare, key)).toBe(bare);
    const other = { ...event, type: 'UserDeleted' };
    expect(sealPersonalData(fields, other, key)).toBe(other);
    expect(openPersonalData(other, key)).toBe(other);
  });
});

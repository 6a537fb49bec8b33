import { validationIssues } from '@deals/wire';
import { cardExpiryIssue } from '../../commands/store-card.command';
import { cardFields } from '../../http/credit-card.request';
import { TEST_CARD_NUMBERS } from '@deals/kernel';
import { cardBrand, cardExpiresAt, cardModeIssue, maskedNumber, normaliseCardNumber, passesLuhn } from './card-number';

type CardInput = Record<string, unknown>;

/** A card's problems as a call reports them: its fields' (the request schema's), then its expiry (the clock's). */
function validateCardInput(input: CardInput, now: Date) {
  const parsed = cardFields.safeParse(input);
  if (!parsed.success) return validationIssues(parsed.error, cardFields);
  const expired = cardExpiryIssue(parsed.data, now);
  return expired ? [expired] : [];
}

const now = new Date('2026-03-15T12:00:00.000Z');
const good: CardInput = { number: '4242424242424242', verification_value: '123', month: 7, year: 2030, zip_code: '94107' };
const issuesOf = (change: Partial<CardInput>, at = now) => validateCardInput({ ...good, ...change }, at);
const issue = (field: string, message: string, type = 'invalid') => ({ type, message, resource: 'credit_card', field });

/** A Luhn-valid 16-digit number starting with `prefix`, zero-filled. */
function luhnValid(prefix: string): string {
  const body = prefix.padEnd(15, '0');
  for (let d = 0; d <= 9; d++) if (passesLuhn(body + d)) return body + d;
  throw new Error('unreachable');
}

describe('cardBrand', () => {
  it.each([
    ['4242424242424242', 'Visa'],
    ['5555555555554444', 'MasterCard'],
    ['2223003122003222', 'MasterCard'],
    ['6011111111111117', 'Discover'],
    ['3566002020360505', 'JCB'],
    ['6200000000000005', 'UnionPay'],
  ])('names the well-known test number %s %s', (number, brand) => {
    expect(passesLuhn(number)).toBe(true);
    expect(cardBrand(number)).toBe(brand);
  });

  it.each([
    ['51', 'MasterCard'],
    ['55', 'MasterCard'],
    ['2221', 'MasterCard'],
    ['2720', 'MasterCard'],
    ['6011', 'Discover'],
    ['644', 'Discover'],
    ['649', 'Discover'],
    ['65', 'Discover'],
    ['3528', 'JCB'],
    ['3589', 'JCB'],
    ['62', 'UnionPay'],
    ['4', 'Visa'],
  ])('knows the edge of each range: %s is %s', (prefix, brand) => {
    expect(cardBrand(luhnValid(prefix))).toBe(brand);
  });

  it.each(['50', '56', '2220', '2721', '6010', '643', '3527', '3590', '34', '37', '1', '7', '9'])(
    'has no brand for a 16-digit number starting %s',
    (prefix) => expect(cardBrand(luhnValid(prefix))).toBeNull(),
  );

  it('reads a number typed with spaces or dashes, and nothing that is not 16 digits', () => {
    expect(cardBrand('4242 4242 4242 4242')).toBe('Visa');
    expect(cardBrand('5555-5555-5555-4444')).toBe('MasterCard');
    expect(cardBrand('424242424242424')).toBeNull();
    expect(cardBrand('42424242424242424')).toBeNull();
  });
});

describe('normaliseCardNumber and maskedNumber', () => {
  it('strips spaces and dashes only', () => {
    expect(normaliseCardNumber(' 4242-4242 4242  4242 ')).toBe('4242424242424242');
    expect(normaliseCardNumber('4242a4242')).toBe('4242a4242');
  });

  it('shows the last four digits only', () => {
    expect(maskedNumber('1234')).toBe('XXXX-XXXX-XXXX-1234');
  });

  it('refuses to "mask" anything but four digits', () => {
    expect(() => maskedNumber('4242424242424242')).toThrow(/last four digits/);
    expect(() => maskedNumber('12a4')).toThrow();
  });
});

describe('validateCardInput', () => {
  it('accepts a good card, with month and year as numbers or as text', () => {
    expect(validateCardInput(good, now)).toEqual([]);
    expect(issuesOf({ month: '07', year: '2030' })).toEqual([]);
    expect(issuesOf({ number: '4242 4242-4242 4242', zip_code: '94107-1234' })).toEqual([]);
  });

  it.each(['5555555555554444', '2223003122003222', '6011111111111117', '3566002020360505', '6200000000000005'])('accepts %s', (number) =>
    expect(issuesOf({ number })).toEqual([]),
  );

  it('reports every missing field at once', () => {
    expect(validateCardInput({}, now)).toEqual([
      issue('number', 'is required', 'missing_field'),
      issue('verification_value', 'is required', 'missing_field'),
      issue('month', 'is required', 'missing_field'),
      issue('year', 'is required', 'missing_field'),
      issue('zip_code', 'is required', 'missing_field'),
    ]);
    expect(issuesOf({ number: '  ', month: null })).toEqual([
      issue('number', 'is required', 'missing_field'),
      issue('month', 'is required', 'missing_field'),
    ]);
  });

  describe('number', () => {
    it('takes digits, spaces and dashes only', () => {
      expect(issuesOf({ number: '4242.4242.4242.4242' })).toEqual([issue('number', 'must contain only digits, spaces and dashes')]);
      expect(issuesOf({ number: { digits: '4242' } })).toEqual([issue('number', 'must be a string of digits')]);
    });

    it('must be exactly 16 digits', () => {
      expect(issuesOf({ number: '424242424242424' })).toEqual([issue('number', 'must be 16 digits')]);
      expect(issuesOf({ number: '42424242424242424' })).toEqual([issue('number', 'must be 16 digits')]);
      expect(issuesOf({ number: '378282246310005' })).toEqual([issue('number', 'must be 16 digits')]);
    });

    it('must pass the Luhn check', () => {
      expect(issuesOf({ number: '4242424242424241' })).toEqual([issue('number', 'fails the Luhn check')]);
    });

    it('must be of a supported brand', () => {
      expect(issuesOf({ number: luhnValid('7') })).toEqual([
        issue('number', 'is not a supported card brand (Visa, MasterCard, Discover, JCB, UnionPay)'),
      ]);
    });

    it('reports a wrong check digit and an unknown brand as two problems', () => {
      expect(issuesOf({ number: '7000000000000000' }).map((i) => i.message)).toEqual([
        'fails the Luhn check',
        'is not a supported card brand (Visa, MasterCard, Discover, JCB, UnionPay)',
      ]);
    });

    it('never quotes the number or the code in a message', () => {
      const messages = validateCardInput({ number: '4242424242424241', verification_value: '12345' }, now)
        .map((i) => i.message)
        .join(' ');
      expect(messages).not.toMatch(/4242|12345/);
    });
  });

  describe('verification_value', () => {
    it.each(['12', '1234', '12a', 'abc'])('refuses %j', (verification_value) => {
      expect(issuesOf({ verification_value })).toEqual([issue('verification_value', 'must be 3 digits')]);
    });

    it('keeps the leading zero of a code given as text', () => {
      expect(issuesOf({ verification_value: '012' })).toEqual([]);
    });
  });

  describe('month and year', () => {
    it.each([0, 13, '13', '00', 7.5, '7a', '007', true])('refuses month %j', (month) => {
      expect(issuesOf({ month })).toEqual([issue('month', 'must be a month from 1 to 12')]);
    });

    it.each([30, '30', 20301, '203', 'twenty', 2030.5])('refuses year %j', (year) => {
      expect(issuesOf({ year })).toEqual([issue('year', 'must be four digits')]);
    });

    it('counts a card valid through the last instant of its month, in UTC', () => {
      expect(cardExpiresAt(3, 2026).toISOString()).toBe('2026-04-01T00:00:00.000Z');
      expect(issuesOf({ month: 3, year: 2026 }, new Date('2026-03-31T23:59:59.999Z'))).toEqual([]);
      expect(issuesOf({ month: 3, year: 2026 }, new Date('2026-04-01T00:00:00.000Z'))).toEqual([issue('year', 'has expired')]);
      expect(issuesOf({ month: 12, year: 2025 })).toEqual([issue('year', 'has expired')]);
    });

    it('does not call a card expired when its month or year is unreadable', () => {
      expect(issuesOf({ month: 13, year: 1999 }).map((i) => i.message)).toEqual(['must be a month from 1 to 12']);
    });
  });

  describe('zip_code', () => {
    it.each(['9410', '941071', '94107-12', '94107 1234', 'SW1A 1AA', '941071234'])('refuses %j', (zip_code) => {
      expect(issuesOf({ zip_code })).toEqual([issue('zip_code', 'must be a 5-digit US zip code or ZIP+4 (12345-6789)')]);
    });

    it('accepts a zip code given as a number', () => {
      expect(issuesOf({ zip_code: 94107 })).toEqual([]);
    });
  });
});

describe('test cards by mode', () => {
  const issue = (number: string, sandbox: boolean, liveTakesTestCards: boolean) =>
    cardModeIssue(number, sandbox, liveTakesTestCards, TEST_CARD_NUMBERS);

  it('lets a sandbox store only the published test cards', () => {
    expect(issue('4242424242424242', true, false)).toBeNull();
    expect(issue('4000000000000002', true, false)).toBeNull();
    expect(issue('6011000990139424', true, true)).toMatch(/^is not a test card/);
  });

  it('lets a live call store test cards only where the installation allows them', () => {
    expect(issue('4242424242424242', false, true)).toBeNull();
    expect(issue('4242424242424242', false, false)).toMatch(/^is a test card: use test credentials/);
    expect(issue('6011000990139424', false, false)).toBeNull();
  });
});

import { xmlDateTimeInstant, xmlDateTimeSpanMs, isoInstant, isIsoDateText } from './calendar';

describe('isoInstant', () => {
  it('reads a date and time with its offset', () => {
    expect(isoInstant('2026-06-15T12:00:30Z')?.toISOString()).toBe('2026-06-15T12:00:30.000Z');
    expect(isoInstant('2026-06-15T14:00+02:00')?.toISOString()).toBe('2026-06-15T12:00:00.000Z');
    expect(isoInstant('2026-06-15T12:00:00.123456Z')?.toISOString()).toBe('2026-06-15T12:00:00.123Z');
  });

  it('refuses what is not one instant', () => {
    for (const text of [
      '1',
      'Nov 23 2026 18:30:35 GMT',
      '2026-06-15',
      '2026-06-15T12:00:00',
      '2026-02-30T00:00:00Z',
      '2026-06-15T25:00:00Z',
      '2026-06-15Z',
      '',
      null,
      17,
    ]) {
      expect([text, isoInstant(text)]).toEqual([text, null]);
    }
  });
});

describe('xmlDateTimeInstant', () => {
  it('reads YYYY-MM-DDThh:mm:ss with an optional fraction and offset; no offset is UTC', () => {
    expect(xmlDateTimeInstant('2026-06-15T09:30:00')?.toISOString()).toBe('2026-06-15T09:30:00.000Z');
    expect(xmlDateTimeInstant('2026-06-15T09:30:00Z')?.toISOString()).toBe('2026-06-15T09:30:00.000Z');
    expect(xmlDateTimeInstant('2026-06-15T09:30:00-05:00')?.toISOString()).toBe('2026-06-15T14:30:00.000Z');
    expect(xmlDateTimeInstant('2026-06-15T09:30:00.25+01:30')?.toISOString()).toBe('2026-06-15T08:00:00.250Z');
  });
  it('refuses other forms and impossible times', () => {
    for (const text of [
      '2026-06-15',
      '2026-06-15T09:30',
      '2026-02-30T00:00:00',
      '2026-06-15T24:00:00',
      '2026-06-15T09:60:00',
      '2026-06-15T09:30:00+15:00',
      '2026-06-15 09:30:00',
      'Mon Jun 15 2026',
      20260615,
      null,
    ])
      expect(xmlDateTimeInstant(text)).toBeNull();
  });
});

describe('xmlDateTimeSpanMs', () => {
  it('is the unit of the last digit written: a second without a fraction, down to a millisecond', () => {
    expect(
      ['2026-06-15T09:30:00', '2026-06-15T09:30:00.5Z', '2026-06-15T09:30:00.25-05:00', '2026-06-15T09:30:00.123456'].map(
        xmlDateTimeSpanMs,
      ),
    ).toEqual([1000, 100, 10, 1]);
    expect(xmlDateTimeSpanMs('2026-06-15')).toBeNull();
  });
});

describe('isIsoDateText', () => {
  it('takes a date, or a date and time, on a day the calendar has', () => {
    expect(isIsoDateText('2026-06-15T10:00:00Z', 'optional')).toBe(true);
    expect(isIsoDateText('2028-02-29', 'optional')).toBe(true);
    expect(isIsoDateText('2026-06-15T10:00', 'required')).toBe(false);
  });

  it('refuses a day the calendar lacks, which Date would roll into the next month', () => {
    for (const text of ['2027-02-30T00:00:00Z', '2027-02-29', '2026-04-31T10:00:00+02:00', '2026-13-01'])
      expect([text, isIsoDateText(text, 'optional')]).toEqual([text, false]);
  });
});

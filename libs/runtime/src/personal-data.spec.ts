import { PERSONAL_ENVELOPE, sealPersonalData } from '@deals/kernel';
import { declaredEventTypes, DeclaredEventType, repositoryRootOf } from '@deals/testing/event-types';
import { randomBytes } from 'node:crypto';
import { KEPT_IN_CLEAR, PERSONAL_DATA } from './personal-data';

/**
 * Names of fields that hold, or may hold, something about a person: an email, a name, an address
 * (postal or network), a telephone, a birthday, a postal or zip code, a city or street, data a
 * partner keeps about its user.
 */
const LOOKS_PERSONAL =
  /e_?mail|(^|_)name$|^name|Name$|surname|address|phone|mobile|birth|postal|zip|partner_?data|^city$|street|^ip$|buyer|recipient/i;

const looksPersonal = (path: readonly string[]) => LOOKS_PERSONAL.test(path.filter((name) => name !== '*').at(-1) ?? '');

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.every((name, i) => path[i] === name);

/** Where `path` of event type `type` is declared personal (a declared path covers what is under it). */
const declaredPersonal = (type: string, path: readonly string[]) =>
  (PERSONAL_DATA.fields.get(type)?.paths ?? []).some((declared) => startsWith(path, declared));

/** The entry of {@link KEPT_IN_CLEAR} that covers `path`, if any. */
const keptInClear = (type: string, path: readonly string[]) =>
  path.map((_, i) => `${type}.${path.slice(0, i + 1).join('.')}`).find((key) => KEPT_IN_CLEAR.has(key));

/**
 * Every event type of every context, read from the sources, and every field of its data: none whose
 * name looks personal goes to the log unless it is declared personal (and so encrypted under its
 * subject's key) or listed as kept in clear with the reason.
 */
describe('personal data in every event type', () => {
  let events: DeclaredEventType[];
  beforeAll(() => {
    events = declaredEventTypes(repositoryRootOf(__filename));
  }, 120_000);

  it('finds the event types of every context', () => {
    const types = new Set(events.map((event) => event.type));
    for (const type of ['UserRegistered', 'PurchaseResold', 'TransactionReferenceClaimed', 'DealListed', 'MemberInvited', 'BatchScheduled'])
      expect(types).toContain(type);
    // One name, one event: two declarations of one type would let one of them go unread.
    const twice = events.filter((event, i) => events.findIndex((other) => other.type === event.type) !== i);
    expect(twice.map((event) => event.file)).toEqual([]);
  });

  it('declares every field that looks personal, or says why it is kept in clear', () => {
    const undeclared = events.flatMap(({ type, fields }) => {
      // An object is declared when each field inside it is (its fields are then sealed one by one).
      const under = (path: readonly string[]) => fields.filter((field) => field.path.length > path.length && startsWith(field.path, path));
      const declared = (path: readonly string[]): boolean =>
        declaredPersonal(type, path) ||
        (under(path).length > 0 && under(path).every((inner) => declared(inner.path) || under(inner.path).length > 0));
      return fields
        .filter(({ path }) => looksPersonal(path) && !declared(path) && !keptInClear(type, path))
        .map(({ path }) => `${type}.${path.join('.')}`);
    });
    expect(undeclared).toEqual([]);
  });

  it('knows what is under every record whose keys the type leaves open, or says why it is kept in clear', () => {
    const unnamed = events.flatMap(({ type, fields }) =>
      fields
        .filter(({ path, open }) => open && !declaredPersonal(type, path) && !keptInClear(type, path))
        .map(({ path }) => `${type}.${path.join('.')}`),
    );
    expect(unnamed).toEqual([]);
  });

  it('names only event types and fields that exist, in what it declares and what it keeps in clear', () => {
    const byType = new Map(events.map((event) => [event.type, event]));
    const exists = (type: string, path: readonly string[]) =>
      byType.get(type)?.fields.some((field) => field.path.join('.') === path.join('.')) ?? false;
    const stale = [
      ...[...PERSONAL_DATA.fields].flatMap(([type, of]) =>
        of.paths.filter((path) => !exists(type, path)).map((path) => `${type}.${path.join('.')}`),
      ),
      ...[...PERSONAL_DATA.erasures.keys()].filter((type) => !byType.has(type)),
      ...[...KEPT_IN_CLEAR.keys()].filter((key) => {
        const [type, ...path] = key.split('.');
        return !exists(type, path);
      }),
    ];
    expect(stale).toEqual([]);
  });

  it('seals every personal value of a whole payload of each type under its subject: none left in clear', () => {
    const key = randomBytes(32);
    const leaks = events.flatMap(({ type, fields, sample }) => {
      const sealed = sealPersonalData(PERSONAL_DATA.fields, { id: 'e-1', type, data: sample }, key);
      const written = JSON.stringify(sealed.data);
      const personal = fields.filter(({ path }) => declaredPersonal(type, path) && looksPersonal(path));
      if (personal.length > 0 && !(PERSONAL_ENVELOPE in (sealed.data as object))) return [`${type}: not sealed (no subject)`];
      return personal.filter(({ path }) => written.includes(`"sample:${path.join('.')}"`)).map(({ path }) => `${type}.${path.join('.')}`);
    });
    expect(leaks).toEqual([]);
  });
});

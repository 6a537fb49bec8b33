import { EventStore, handleCommand, ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember, memberStream } from '@deals/partner-site';
import { memberDecider } from '@deals/partner-site/domain/member/member.decider';
import { CommandBus } from '@nestjs/cqrs';
import { createHash, randomBytes } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { SiteClient } from '../../support/site-client';

const PASSWORD = 'a long and private passphrase';
/** `café@…` with its `é` one letter (NFC) or an `e` and a combining acute accent (NFD). */
const COMPOSED = 'caf\u00e9@example.com';
const DECOMPOSED = 'cafe\u0301@example.com';

/** A member's id as addresses were keyed before they were compared in NFC, case-folded: their lower case. */
const idOfBefore = (email: string) =>
  createHash('sha256').update(`partner-member\n${email.trim().toLowerCase()}`).digest('hex').slice(0, 24);

/**
 * People's emails are compared in Unicode NFC, case-folded: `café` composed or decomposed, in any
 * case, is one member; a member invited when addresses were keyed by their lower case is still found.
 */
describe("the partner site: people's emails outside ASCII", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    partner = await api.createPartner('Unicode partner');
  });
  afterAll(() => api.close());

  const invite = (email: string) => api.get(CommandBus).execute(new InviteMember(partner.partnerId, email, OPERATOR));
  const signUp = async (token: string) => {
    await api.settle();
    const signedUp = await new SiteClient(api.url).submit(`/partner/sign-up?token=${token}`, '/partner/sign-up', {
      token,
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(signedUp.status).toBe(303);
  };
  const signIn = async (email: string) => (await new SiteClient(api.url).signIn(email, PASSWORD)).status;

  it('signs in a member invited as café composed with the decomposed spelling in upper case; inviting either spelling again is the same member', async () => {
    const invited = await invite('caf\u00e9@partner.example');
    await signUp(invited.token);
    expect(await signIn('CAFE\u0301@PARTNER.EXAMPLE')).toBe(303);
    await expect(invite('Cafe\u0301@partner.example')).rejects.toThrow('signed up already');
    await expect(invite('CAF\u00c9@partner.example')).rejects.toThrow('signed up already');
  });

  it('still finds a member whose id was derived from the lower case of the address they were invited with', async () => {
    // Invited before, with the decomposed spelling: its member id is that spelling's lower case's.
    const memberId = idOfBefore(DECOMPOSED);
    const secret = randomBytes(32).toString('base64url');
    const inviteHash = createHash('sha256').update(secret).digest('hex');
    const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const data = { memberId, partnerId: partner.partnerId, email: DECOMPOSED, inviteHash, expiresAt };
    await handleCommand(
      api.get(EventStore),
      memberStream(memberId),
      memberDecider,
      { type: 'InviteMember', data },
      {
        now: clock.now(),
        metadata: { ...OPERATOR, partnerId: partner.partnerId },
      },
    );
    await signUp(`${memberId}.${secret}`);
    for (const spelling of [DECOMPOSED, DECOMPOSED.toUpperCase(), COMPOSED, COMPOSED.toUpperCase()])
      expect(await signIn(spelling)).toBe(303);
    // Invited again under either spelling, the address is recognised as theirs: no second member.
    for (const spelling of [COMPOSED, DECOMPOSED]) await expect(invite(spelling)).rejects.toThrow('signed up already');
  });
});

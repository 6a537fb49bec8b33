import { CommandCaller, EventStore, handleCommand, loadCachedAggregate } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { legacyEmailKeys, normalEmail } from '../domain/member/member-rules';
import { Member, MemberCommand, memberDecider } from '../domain/member/member.decider';
import { memberStream } from '../domain/member/member.events';

const idOfKey = (key: string) => createHash('sha256').update(`partner-member\n${key}`).digest('hex').slice(0, 24);

/** A member's id: derived from the email, so that one email is one member and a sign-in finds its stream without a view. */
export const memberIdOf = (email: string) => idOfKey(normalEmail(email));

/** Reads a member's stream (the log, not a view: a sign-in right after a sign-up finds it), from its cached fold on. */
export async function loadMember(store: EventStore, memberId: string): Promise<Member> {
  return (await loadCachedAggregate(store, memberStream(memberId), memberDecider)).state;
}

/** Runs `command` on a member's stream with the caller in the events' metadata. */
export const runOnMember = (store: EventStore, memberId: string, command: MemberCommand, now: Date, caller: CommandCaller) =>
  handleCommand(store, memberStream(memberId), memberDecider, command, { now, metadata: caller });

/**
 * The id of the member an email names: the one derived from its key (`normalEmail`), unless nobody
 * is known under it and a member was invited under one of its keys of before (`legacyEmailKeys`),
 * when addresses were keyed by their lower case: then theirs. Reads no stream for an ASCII address.
 */
export async function memberIdFor(store: EventStore, email: string): Promise<string> {
  const memberId = memberIdOf(email);
  const before = legacyEmailKeys(email)
    .map(idOfKey)
    .filter((id) => id !== memberId);
  if (before.length === 0 || (await loadMember(store, memberId)).status !== 'none') return memberId;
  for (const id of before) if ((await loadMember(store, id)).status !== 'none') return id;
  return memberId;
}

/** The id of the member an email names (`memberIdFor`), for the sign-in's throttle before the password is checked. */
export class MemberIdOfEmail extends Command<string> {
  constructor(readonly email: string) {
    super();
  }
}

@CommandHandler(MemberIdOfEmail)
export class MemberIdOfEmailHandler implements ICommandHandler<MemberIdOfEmail> {
  constructor(private readonly store: EventStore) {}

  execute({ email }: MemberIdOfEmail) {
    return memberIdFor(this.store, email);
  }
}

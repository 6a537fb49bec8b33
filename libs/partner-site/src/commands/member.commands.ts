import { Clock, CommandCaller, EventStore, LogPosition, NotFound } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { MemberCommand } from '../domain/member/member.decider';
import { loadMember, memberIdFor, runOnMember } from './member-ids';

/** Session changes of a signed-in member: refresh (idle time restarts), sign out, sign out everywhere. */
export class ChangeMemberSession extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly change: 'refresh' | 'sign-out' | 'sign-out-everywhere',
    readonly memberId: string,
    readonly sessionHash: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(ChangeMemberSession)
export class ChangeMemberSessionHandler implements ICommandHandler<ChangeMemberSession> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ change, memberId, sessionHash, caller }: ChangeMemberSession) {
    const command: MemberCommand =
      change === 'refresh'
        ? { type: 'RefreshMemberSession', data: { memberId, sessionHash } }
        : change === 'sign-out'
          ? { type: 'SignOutMember', data: { memberId, sessionHash } }
          : { type: 'SignOutEverywhere', data: { memberId } };
    const { position } = await runOnMember(this.store, memberId, command, this.clock.now(), caller);
    return { position };
  }
}

/** Takes a person's access away (an operator's offboarding): their sessions end at once and they cannot sign in until invited again. */
export class RemoveMember extends Command<{ memberId: string; endedSessions: number; position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly email: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(RemoveMember)
export class RemoveMemberHandler implements ICommandHandler<RemoveMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ partnerId, email, caller }: RemoveMember) {
    const memberId = await memberIdFor(this.store, email);
    const member = await loadMember(this.store, memberId);
    if (member.status === 'none' || member.partnerId !== partnerId) throw new NotFound('email: no person of this partner');
    const { position, events } = await runOnMember(this.store, memberId, { type: 'RemoveMember', data: { memberId } }, this.clock.now(), {
      ...caller,
      partnerId,
    });
    const removed = events.find((e) => e.type === 'MemberRemoved');
    return { memberId, endedSessions: removed?.type === 'MemberRemoved' ? removed.data.sessionHashes.length : 0, position };
  }
}

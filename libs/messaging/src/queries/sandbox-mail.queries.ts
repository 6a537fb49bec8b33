import { EventStore, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { SandboxMailKept, sandboxMailStream } from '../domain/sandbox-mail/sandbox-mail.decider';
import { SANDBOX_MAIL, SandboxMail } from '../projections/sandbox-mail/sandbox-mail.projection';

/** A sandbox's kept mail: the list from its view, an email whole from the log (its personal values opened, or null once erased). */
@Injectable()
export class SandboxMailQueries {
  constructor(
    private readonly views: ViewStore,
    private readonly store: EventStore,
  ) {}

  list(sandboxId: string, skip: number, limit: number): Promise<SandboxMail[]> {
    return this.views.find<SandboxMail>(SANDBOX_MAIL, { sandboxId }, { sort: { keptAt: -1, _id: -1 }, skip, limit });
  }

  count(sandboxId: string): Promise<number> {
    return this.views.count(SANDBOX_MAIL, { sandboxId });
  }

  async one(sandboxId: string, mailId: string): Promise<{ mail: SandboxMail; kept: SandboxMailKept['data'] } | null> {
    const mail = await this.views.findOne<SandboxMail>(SANDBOX_MAIL, { _id: mailId, sandboxId });
    if (!mail) return null;
    const [event] = await this.store.readStream(sandboxMailStream(mailId));
    return event ? { mail, kept: event.data as SandboxMailKept['data'] } : null;
  }
}

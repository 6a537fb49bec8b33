import {
  IssuePartnerApiKey,
  PartnerApiKey,
  PartnerQueries,
  RenamePartnerApiKey,
  RevokePartnerApiKey,
  RotatePartnerApiKey,
  RotatePartnerPassword,
} from '@deals/accounts';
import { Clock, OPERATOR, UsageStore } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** How long a replaced credential keeps working when the operator does not say. */
const DEFAULT_GRACE = '24h';

/** `--expire-old`: `now`, or a duration such as `30m`, `24h`, `7d` (at most 30 days). */
export function graceEnd(value: string, now: Date): string {
  if (value === 'now') return now.toISOString();
  const match = /^(\d{1,6})([smhd])$/.exec(value);
  const ms = match ? Number(match[1]) * UNITS[match[2]] : NaN;
  if (!Number.isFinite(ms) || ms > 30 * UNITS.d) throw new Error('--expire-old takes `now` or a duration up to 30 days: 90s, 30m, 24h, 7d');
  return new Date(now.getTime() + ms).toISOString();
}

const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const keyJson = (key: PartnerApiKey) => ({
  key_id: key.keyId,
  name: key.name,
  prefix: key.prefix,
  state: key.state,
  issued_at: key.issuedAt,
  expires_at: key.expiresAt,
  revoked_at: key.revokedAt,
});

/** Options every credentials command takes. */
abstract class PartnerCredentialsCommand extends CommandRunner {
  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}

@Command({ name: 'partners:list', description: 'list the partners, as the views show them, with how many keys work for each' })
export class PartnersListCommand extends PartnerCredentialsCommand {
  constructor(private readonly partners: PartnerQueries) {
    super();
  }

  async run(_: string[], options: { json?: boolean }): Promise<void> {
    const partners = await this.partners.partners();
    const rows = partners.map((p) => ({
      partner_id: p.partnerId,
      name: p.name,
      role: p.role,
      username: p.username,
      requests_per_minute: p.requestsPerMinute,
      registered_at: p.registeredAt,
      working_keys: p.workingKeys,
      livemode: p.sandboxOf === null,
    }));
    if (options.json) return void json(rows);
    for (const r of rows)
      process.stdout.write(
        `${r.partner_id}  ${(r.livemode ? r.role : 'sandbox').padEnd(8)} ${String(r.working_keys).padStart(2)} keys  ${r.username.padEnd(32)} ${r.name}\n`,
      );
    process.stdout.write(`${rows.length} partners\n`);
  }
}

@Command({
  name: 'partners:keys',
  arguments: '<partner_id>',
  description: "list a partner's API keys: prefix, name, state, when made and until when they work",
})
export class PartnersKeysCommand extends PartnerCredentialsCommand {
  constructor(
    private readonly partners: PartnerQueries,
    private readonly usage: UsageStore,
  ) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean }): Promise<void> {
    const [keys, lastUsed] = await Promise.all([this.partners.keys(partnerId), this.usage.lastUsed(partnerId)]);
    const rows = keys.map((key) => ({
      ...keyJson(key),
      last_used_at: Object.hasOwn(lastUsed, key.keyId) ? new Date(lastUsed[key.keyId]).toISOString() : null,
    }));
    if (options.json) return void json(rows);
    for (const k of rows)
      process.stdout.write(
        `${(k.prefix ?? k.key_id).padEnd(14)} ${k.state.padEnd(9)} made ${k.issued_at ?? '(at registration)'}` +
          `${k.revoked_at ? `  revoked ${k.revoked_at}` : k.expires_at ? `  ${k.state === 'expired' ? 'expired' : 'until'} ${k.expires_at}` : ''}` +
          `  last used ${k.last_used_at?.slice(0, 16) ?? 'never'}  ${k.name}\n`,
      );
  }
}

@Command({ name: 'partners:add-key', arguments: '<partner_id>', description: 'issue one more API key for a partner and print it, once' })
export class PartnersAddKeyCommand extends PartnerCredentialsCommand {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean; name?: string }): Promise<void> {
    const key = await this.commands.execute(new IssuePartnerApiKey(partnerId, options.name, OPERATOR));
    if (options.json) return void json({ key_id: key.keyId, prefix: key.prefix, api_key: key.apiKey });
    process.stdout.write(`New key ${key.prefix} for partner ${partnerId}; shown only now:\n  api_key  ${key.apiKey}\n`);
  }

  @Option({ flags: '--name <name>', description: 'what the key is for (default: key <n>)' })
  parseName(value: string) {
    return value;
  }
}

@Command({
  name: 'partners:rotate-key',
  arguments: '<partner_id>',
  description:
    "replace a partner's key with a new one, printed once; the old one works until --expire-old (default 24h; now for a leaked key)",
})
export class PartnersRotateKeyCommand extends PartnerCredentialsCommand {
  constructor(
    private readonly commands: CommandBus,
    private readonly partners: PartnerQueries,
    private readonly clock: Clock,
  ) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean; key?: string; expireOld?: string; name?: string }): Promise<void> {
    // The key to replace is named before the rotation: two rotations at once then both replace it, never one the other's new key.
    const live = (await this.partners.keys(partnerId)).filter((k) => k.state === 'live');
    const oldKey =
      options.key !== undefined ? (await this.partners.keyOf(partnerId, options.key)).keyId : live.length === 1 ? live[0].keyId : null;
    const until = graceEnd(options.expireOld ?? DEFAULT_GRACE, this.clock.now());
    const key = await this.commands.execute(new RotatePartnerApiKey(partnerId, oldKey, until, OPERATOR, options.name));
    const old = key.oldKeyId === null ? null : await this.partners.keyOf(partnerId, key.oldKeyId);
    if (options.json) return void json({ key_id: key.keyId, prefix: key.prefix, api_key: key.apiKey, old_key: old && keyJson(old) });
    process.stdout.write(
      `New key ${key.prefix} for partner ${partnerId}; shown only now:\n  api_key  ${key.apiKey}\n` +
        (old ? `The old key ${old.prefix ?? old.keyId} works until ${old.expiresAt}.\n` : 'The partner held no live key to replace.\n'),
    );
  }

  @Option({ flags: '--key <prefix>', description: "the key to replace, by prefix or id (default: the partner's one live key)" })
  parseKey(value: string) {
    return value;
  }

  @Option({ flags: '--expire-old <duration>', description: 'how long the old key keeps working: now, or 90s, 30m, 24h, 7d (default 24h)' })
  parseExpireOld(value: string) {
    graceEnd(value, new Date());
    return value;
  }

  @Option({ flags: '--name <name>', description: "the new key's name (default: the old key's)" })
  parseName(value: string) {
    return value;
  }
}

@Command({
  name: 'partners:revoke-key',
  arguments: '<partner_id> <key_prefix>',
  description: "stop a partner's key at once (by its prefix or id)",
})
export class PartnersRevokeKeyCommand extends PartnerCredentialsCommand {
  constructor(
    private readonly commands: CommandBus,
    private readonly partners: PartnerQueries,
  ) {
    super();
  }

  async run([partnerId, prefix]: string[], options: { json?: boolean }): Promise<void> {
    const key = await this.partners.keyOf(partnerId, prefix);
    await this.commands.execute(new RevokePartnerApiKey(partnerId, key.keyId, OPERATOR));
    const revoked = await this.partners.keyOf(partnerId, key.keyId);
    if (options.json) return void json(keyJson(revoked));
    process.stdout.write(`Key ${revoked.prefix ?? revoked.keyId} of partner ${partnerId} revoked at ${revoked.revokedAt}.\n`);
  }
}

@Command({
  name: 'partners:rename-key',
  arguments: '<partner_id> <key_prefix> <name>',
  description: "rename a partner's key (by its prefix or id)",
})
export class PartnersRenameKeyCommand extends PartnerCredentialsCommand {
  constructor(
    private readonly commands: CommandBus,
    private readonly partners: PartnerQueries,
  ) {
    super();
  }

  async run([partnerId, prefix, name]: string[], options: { json?: boolean }): Promise<void> {
    const key = await this.partners.keyOf(partnerId, prefix);
    await this.commands.execute(new RenamePartnerApiKey(partnerId, key.keyId, name, OPERATOR));
    const renamed = await this.partners.keyOf(partnerId, key.keyId);
    if (options.json) return void json(keyJson(renamed));
    process.stdout.write(`Key ${renamed.prefix ?? renamed.keyId} of partner ${partnerId} is now named ${renamed.name}.\n`);
  }
}

@Command({
  name: 'partners:rotate-password',
  arguments: '<partner_id>',
  description: "replace a partner's v3 password with a new one, printed once; the old one works until --expire-old (default 24h)",
})
export class PartnersRotatePasswordCommand extends PartnerCredentialsCommand {
  constructor(
    private readonly commands: CommandBus,
    private readonly clock: Clock,
  ) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean; expireOld?: string }): Promise<void> {
    const until = graceEnd(options.expireOld ?? DEFAULT_GRACE, this.clock.now());
    const rotated = await this.commands.execute(new RotatePartnerPassword(partnerId, until, OPERATOR));
    if (options.json)
      return void json({ username: rotated.username, password: rotated.password, old_password_expires_at: rotated.previousExpiresAt });
    process.stdout.write(
      `New v3 password for ${rotated.username}; shown only now:\n  password ${rotated.password}\nThe old one works until ${rotated.previousExpiresAt}.\n`,
    );
  }

  @Option({
    flags: '--expire-old <duration>',
    description: 'how long the old password keeps working: now, or 90s, 30m, 24h, 7d (default 24h)',
  })
  parseExpireOld(value: string) {
    graceEnd(value, new Date());
    return value;
  }
}

import {
  checkpointSigningKey,
  Clock,
  EventStore,
  HistoryProofs,
  HistorySealer,
  LogSealer,
  proveStream,
  SealStore,
  SignedCheckpoint,
  StreamProof,
} from '@deals/kernel';
import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';

export interface HistorySealingOptions {
  /** Whether this process seals (the one that keeps the views and runs the jobs). */
  seals: boolean;
  everyMs: number;
}

/**
 * The installation's sealing of its log: its checkpoint-signing key (from a secret of the data
 * folder), and, in the process that keeps the views, a checkpoint of the new events every
 * `everyMs`. Every process can verify with the public key; only one seals.
 */
export class HistorySealing extends HistoryProofs implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  readonly sealer: LogSealer;
  readonly publicKey: KeyObject;
  private readonly logger = new Logger('HistorySeal');
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<unknown> | null = null;
  /** Set as the process stops: a round ends after the checkpoint it is writing. */
  private stopping = false;

  constructor(
    readonly log: EventStore,
    readonly seals: SealStore,
    /** Real time: a checkpoint says when it was sealed. */
    clock: Clock,
    secret: Buffer,
    private readonly options: HistorySealingOptions,
    /** Who seals, when not this process's event loop (the embedded log's sealing thread). */
    sealer?: LogSealer | null,
  ) {
    super();
    const { privateKey, publicKey } = checkpointSigningKey(secret);
    this.publicKey = publicKey;
    this.sealer = sealer ?? new HistorySealer(log, seals, clock, privateKey);
  }

  /** The public key, PEM (SPKI): what an auditor checks checkpoints' signatures with. */
  publicKeyPem(): string {
    return this.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  streamProof(streamId: string): Promise<StreamProof> {
    return proveStream(this.log, this.seals, streamId);
  }

  checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]> {
    return this.seals.checkpoints(from, limit);
  }

  /** Seals every event not sealed yet, now, after the round under way; how many checkpoints were written. */
  async sealNow(): Promise<number> {
    while (this.round) await this.round.catch(() => undefined);
    const round = this.sealer.sealAll(() => this.stopping);
    this.round = round;
    try {
      return await round;
    } finally {
      if (this.round === round) this.round = null;
    }
  }

  onApplicationBootstrap(): void {
    if (!this.options.seals) return;
    this.timer = setInterval(() => {
      if (this.round) return;
      const round: Promise<unknown> = this.sealer
        .sealAll(() => this.stopping)
        .catch((error) =>
          this.logger.error(`the log's new events were not sealed; tried again in ${this.options.everyMs} ms: ${String(error)}`),
        )
        .finally(() => {
          if (this.round === round) this.round = null;
        });
      this.round = round;
    }, this.options.everyMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round?.catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sealer.close?.();
    await this.seals.close();
  }
}

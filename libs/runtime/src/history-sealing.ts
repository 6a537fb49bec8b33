import {
  checkpointSigningKey,
  Clock,
  EventStore,
  HistoryProofs,
  HistorySealer,
  LogSealer,
  proveStream,
  SealRaced,
  SealStore,
  SignedCheckpoint,
  StreamProof,
} from '@deals/kernel';
import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';

export interface HistorySealingOptions {
  /** Whether this process seals (the one that keeps the views and runs the jobs). */
  seals: boolean;
  everyMs: number;
  /** Whether, not sealing, it seals what it appended as it stops when no process that seals runs (an operator's command). */
  sealsOwnWrites: boolean;
  /** How many appends the log has acknowledged since this process opened it (counted by the log's observer). */
  appendsAcknowledged: () => number;
}

/** How often a last pass that a second sealer raced is made again. */
const RACED_TRIES = 3;

/**
 * The installation's sealing of its log: its checkpoint-signing key (from a secret of the data
 * folder), and, in the process that keeps the views, a checkpoint of the new events every
 * `everyMs` and a last one of everything as it stops. Every process can verify with the public
 * key; only one seals (an operator's command seals what it wrote when none runs).
 */
export class HistorySealing extends HistoryProofs implements OnApplicationBootstrap, BeforeApplicationShutdown {
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

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.seals) return;
    await this.seals.declareSealer();
    this.timer = setInterval(() => {
      if (this.round) return;
      // Said again each round: a connection lost since is replaced.
      const round: Promise<unknown> = this.seals
        .declareSealer()
        .then(() => this.sealer.sealAll(() => this.stopping))
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

  /**
   * As the process stops, once nothing more of its own is written (its requests answered, its
   * projections and jobs stopped) and before the log closes: the process that seals seals everything
   * committed; an operator's command seals what it appended when no process that seals is running,
   * which would otherwise leave it open to an unseen edit until the next start. Then closes the seals.
   */
  async close(): Promise<void> {
    try {
      const sealing =
        this.options.seals ||
        (this.options.sealsOwnWrites && this.options.appendsAcknowledged() > 0 && !(await this.seals.sealerRunning()));
      if (sealing) {
        const written = await this.sealToEnd();
        if (written > 0) this.logger.log(`sealed the log's last events under ${written} checkpoints before stopping`);
      }
    } catch (error) {
      this.logger.error(`the log's last events were not sealed as the process stopped: ${String(error)}`);
    } finally {
      await this.sealer.close?.();
      await this.seals.close();
    }
  }

  /** Seals everything the log holds, to its end, after any round under way; a checkpoint another sealer wrote first is gone on from. */
  private async sealToEnd(): Promise<number> {
    while (this.round) await this.round.catch(() => undefined);
    for (let tries = 1; ; tries++) {
      try {
        return await this.sealer.sealAll();
      } catch (error) {
        if (!(error instanceof SealRaced) || tries >= RACED_TRIES) throw error;
      }
    }
  }
}

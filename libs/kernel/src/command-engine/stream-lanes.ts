/** Commands decided together and appended in one write, at most. */
export const MAX_BATCH = 256;

/** What waits in a lane: a command with its decider (a batch has one), which its lane fails if its batch throws. */
export interface Queued {
  readonly decider: unknown;
  reject(error: unknown): void;
}

/** Writes one batch of a stream's commands and settles each of them. */
export interface LaneWriter<W extends Queued> {
  write(streamId: string, batch: W[]): Promise<void>;
}

/**
 * The commands waiting on each stream of one store, and their turns: inside a process, the commands
 * of one stream are written one batch after the other, and the commands that arrived while the
 * stream's previous write was in flight go out together as the next batch. Streams do not wait for
 * one another.
 */
export class StreamLanes<W extends Queued> {
  /** The commands waiting on each stream; a stream is in the map while it is being written. */
  private readonly streams = new Map<string, W[]>();

  constructor(private readonly writer: LaneWriter<W>) {}

  /** Queues `waiting` behind its stream's commands, starting the stream's turns if it has none. */
  enqueue(streamId: string, waiting: W): void {
    const queue = this.streams.get(streamId);
    if (queue) queue.push(waiting);
    else {
      this.streams.set(streamId, [waiting]);
      void this.drain(streamId);
    }
  }

  private async drain(streamId: string): Promise<void> {
    const queue = this.streams.get(streamId)!;
    // Let the commands of this turn of the loop join the first batch.
    await Promise.resolve();
    while (queue.length) {
      // One decider per batch (a stream belongs to one aggregate; this only guards misuse).
      let size = 1;
      while (size < queue.length && size < MAX_BATCH && queue[size].decider === queue[0].decider) size++;
      const batch = queue.splice(0, size);
      try {
        await this.writer.write(streamId, batch);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.streams.delete(streamId);
  }
}

import {
  accountOf,
  Clock,
  CommandCaller,
  CommandContext,
  EventStore,
  Forbidden,
  handleCommand,
  IdempotencyStore,
  IdGenerator,
  isSandbox,
  loadAggregate,
  LogPosition,
  testClockOf,
  TestClockRunner,
  testClockDecider,
  testClockStream,
  underTestClock,
  ValidationFailed,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { TestClockPlacesCommand, testClockPlacesDecider, testClockPlacesStream } from '../domain/test-clock/test-clock-places';

/** A command on the sandbox's clock places (its stream named by the command's sandbox). */
const onPlaces = (store: EventStore, command: TestClockPlacesCommand, context: CommandContext) =>
  handleCommand(store, testClockPlacesStream(command.data.sandboxId), testClockPlacesDecider, command, context);

/** Refuses a clock to anyone but a sandbox. */
function sandboxAccount(partnerId: string): string {
  if (!isSandbox(partnerId)) throw new Forbidden('test clocks are a sandbox’s: use your test credentials');
  return accountOf(partnerId);
}

/** POST /v1/test_clocks: a clock standing at `frozenTime`. */
export class CreateTestClock extends Command<{ clockId: string; position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly frozenTime: Date,
    readonly name: string | null,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(CreateTestClock)
export class CreateTestClockHandler implements ICommandHandler<CreateTestClock> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ partnerId, frozenTime, name, caller }: CreateTestClock) {
    const account = sandboxAccount(partnerId);
    if (testClockOf(partnerId) !== null)
      throw new Forbidden('a test clock is made by the sandbox itself: make it without Deals-Test-Clock');
    const clockId = `clock_${this.ids.short()}`;
    const context = { now: this.clock.now(), metadata: caller };
    const take = () => onPlaces(this.store, { type: 'TakeTestClockPlace', data: { sandboxId: account, clockId } }, context);
    try {
      await take();
    } catch (error) {
      // Full: first free the places a stop left held (a clock deleted, or never made), then try again.
      if (!(error instanceof ValidationFailed) || (await this.freeLostPlaces(account, context)) === 0) throw error;
      await take();
    }
    const { position } = await handleCommand(
      this.store,
      testClockStream(clockId),
      testClockDecider,
      { type: 'CreateTestClock', data: { clockId, partnerId: account, name, frozenTime: frozenTime.toISOString() } },
      { now: this.clock.now(), metadata: caller },
    );
    return { clockId, position };
  }

  /** Frees the places of clocks deleted, or never made (a stop between taking the place and making the clock); how many. */
  private async freeLostPlaces(account: string, context: CommandContext): Promise<number> {
    const { state: held } = await loadAggregate(this.store, testClockPlacesStream(account), testClockPlacesDecider);
    let freed = 0;
    for (const clockId of held) {
      const { state } = await loadAggregate(this.store, testClockStream(clockId), testClockDecider);
      if (state.created && !state.deleted) continue;
      await onPlaces(this.store, { type: 'FreeTestClockPlace', data: { sandboxId: account, clockId } }, context);
      freed++;
    }
    return freed;
  }
}

/** POST /v1/test_clocks/:id/advance: moves the clock to `to`, its jobs due by then run where jobs run. */
export class AdvanceTestClock extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly clockId: string,
    readonly to: Date,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(AdvanceTestClock)
export class AdvanceTestClockHandler implements ICommandHandler<AdvanceTestClock> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly runner: TestClockRunner,
  ) {}

  async execute({ partnerId, clockId, to, caller }: AdvanceTestClock) {
    sandboxAccount(partnerId);
    const { position } = await handleCommand(
      this.store,
      testClockStream(clockId),
      testClockDecider,
      { type: 'AdvanceTestClock', data: { clockId, to: to.toISOString() } },
      { now: this.clock.now(), metadata: caller },
    );
    await this.runner.advanceSoon(clockId, to.toISOString());
    return { position };
  }
}

/** DELETE /v1/test_clocks/:id: the clock and its world are gone; its place is free for another. */
export class DeleteTestClock extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly clockId: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(DeleteTestClock)
export class DeleteTestClockHandler implements ICommandHandler<DeleteTestClock> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly keys: IdempotencyStore,
  ) {}

  async execute({ partnerId, clockId, caller }: DeleteTestClock) {
    const account = sandboxAccount(partnerId);
    const context = { now: this.clock.now(), metadata: caller };
    const { position } = await handleCommand(
      this.store,
      testClockStream(clockId),
      testClockDecider,
      { type: 'DeleteTestClock', data: { clockId } },
      context,
    );
    // After the clock is gone, its place freed and its world's idempotency keys forgotten (no advance
    // purges them again); a delete sent again after a stop between these does what is left.
    await onPlaces(this.store, { type: 'FreeTestClockPlace', data: { sandboxId: account, clockId } }, context);
    await this.keys.purge(Number.MAX_SAFE_INTEGER, underTestClock(account, clockId));
    return { position };
  }
}

import {
  accountOf,
  Clock,
  CommandCaller,
  EventStore,
  Forbidden,
  handleCommand,
  IdGenerator,
  isSandbox,
  LogPosition,
  testClockOf,
  TestClockRunner,
  testClockDecider,
  testClockStream,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { testClockPlacesDecider, testClockPlacesStream } from '../domain/test-clock/test-clock-places';

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
    const place = { sandboxId: account, clockId };
    await handleCommand(
      this.store,
      testClockPlacesStream(account),
      testClockPlacesDecider,
      { type: 'TakeTestClockPlace', data: place },
      context,
    );
    const { position } = await handleCommand(
      this.store,
      testClockStream(clockId),
      testClockDecider,
      { type: 'CreateTestClock', data: { clockId, partnerId: account, name, frozenTime: frozenTime.toISOString() } },
      { now: this.clock.now(), metadata: caller },
    );
    return { clockId, position };
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
    // Freed after the clock is gone (a delete sent again after a stop between the two frees it then).
    const place = { sandboxId: account, clockId };
    await handleCommand(
      this.store,
      testClockPlacesStream(account),
      testClockPlacesDecider,
      { type: 'FreeTestClockPlace', data: place },
      context,
    );
    return { position };
  }
}

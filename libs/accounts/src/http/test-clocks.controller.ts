import { accountOf, NotFound, ViewProgress, ViewStore } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, NotUnderTestClock, CalledBy, NoBody } from '@deals/wire';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdvanceTestClock, CreateTestClock, DeleteTestClock } from '../commands/test-clock.commands';
import { MAX_TEST_CLOCKS } from '../domain/test-clock/test-clock-places';
import { TEST_CLOCKS, TestClockView } from '../projections/test-clocks/test-clocks.projection';
import { TestClockAnswer, TestClockListAnswer, toTestClock } from './test-clocks.answers';
import { AdvanceTestClockBody, CreateTestClockBody, TestClockParams } from './test-clocks.request';

/** A sandbox's test clocks (test credentials only; a call under a clock gets 403: a clock is the sandbox's own). */
@ApiTags('sandbox')
@Controller('v1/test_clocks')
@UseGuards(NotUnderTestClock)
export class TestClocksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly views: ViewStore,
    private readonly progress: ViewProgress,
  ) {}

  @Post()
  @CalledBy('sandbox')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Make a test clock',
    description:
      'Test credentials only (live: 403). The clock stands at `frozen_time` until advanced. Calls sent with `Deals-Test-Clock: <id>` act under it: ' +
      'in its time, on users, purchases, coupons, card links and batches of its own, which advancing the clock moves through time. ' +
      `A sandbox has at most ${MAX_TEST_CLOCKS} (422 beyond: delete one).`,
  })
  @ApiAnswer(TestClockAnswer, { errors: [403, 422] })
  @ApiRequest({ body: CreateTestClockBody })
  async create(@Body() body: CreateTestClockBody, @CurrentCaller() caller: Caller) {
    const { clockId, position } = await this.commands.execute(
      new CreateTestClock(caller.partnerId, body.frozen_time, body.name ?? null, caller),
    );
    await this.progress.waitFor([TEST_CLOCKS], position);
    return { status: 'success', test_clock: toTestClock(await this.clock(caller, clockId)) };
  }

  @Get()
  @CalledBy('sandbox')
  @ApiOperation({ summary: "The sandbox's test clocks", description: `Newest first (at most ${MAX_TEST_CLOCKS}: a sandbox's limit).` })
  @ApiAnswer(TestClockListAnswer, { errors: [403] })
  async list(@CurrentCaller() caller: Caller) {
    const clocks = await this.views.find<TestClockView>(
      TEST_CLOCKS,
      { partnerId: accountOf(caller.partnerId), deletedAt: null },
      { sort: { createdAt: -1 }, limit: MAX_TEST_CLOCKS },
    );
    return { status: 'success', test_clocks: clocks.map(toTestClock) };
  }

  @Get(':test_clock_id')
  @CalledBy('sandbox')
  @ApiOperation({ summary: 'A test clock', description: 'Its time and status: `advancing` until every consequence of an advance ran.' })
  @ApiAnswer(TestClockAnswer, { errors: [403, 404] })
  @ApiRequest({ params: TestClockParams })
  async one(@Param() params: TestClockParams, @CurrentCaller() caller: Caller) {
    return { status: 'success', test_clock: toTestClock(await this.clock(caller, params.test_clock_id)) };
  }

  @Post(':test_clock_id/advance')
  @CalledBy('sandbox')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Advance a test clock',
    description:
      'Moves the clock forward to `frozen_time` (after its time, at most two years on). Everything that depends on time for what was made under it ' +
      'happens in order, each at its own instant: reservations lapse, batches are sent at their `send_at`, ... The answer comes at once with ' +
      '`status: advancing`; the clock is `ready` once every consequence ran. Calls that write under it wait for that (422 meanwhile).',
  })
  @ApiAnswer(TestClockAnswer, { errors: [403, 404, 422] })
  @ApiRequest({ params: TestClockParams, body: AdvanceTestClockBody })
  async advance(@Param() params: TestClockParams, @Body() body: AdvanceTestClockBody, @CurrentCaller() caller: Caller) {
    await this.clock(caller, params.test_clock_id);
    const { position } = await this.commands.execute(
      new AdvanceTestClock(caller.partnerId, params.test_clock_id, body.frozen_time, caller),
    );
    await this.progress.waitFor([TEST_CLOCKS], position);
    return { status: 'success', test_clock: toTestClock(await this.clock(caller, params.test_clock_id)) };
  }

  @Delete(':test_clock_id')
  @CalledBy('sandbox')
  @ApiOperation({
    summary: 'Delete a test clock',
    description:
      'No call acts under it again (404) and its pending jobs never run; what was made under it stays out of sight of every other call. ' +
      'Frees its place among the sandbox’s clocks.',
  })
  @ApiAnswer(TestClockAnswer, { errors: [403, 404] })
  @ApiRequest({ params: TestClockParams })
  async remove(@Param() params: TestClockParams, @NoBody() _body: void, @CurrentCaller() caller: Caller) {
    const clock = await this.clock(caller, params.test_clock_id, { deleted: true });
    // Deleted already: what a stop left of its deletion is done again, and the answer is 404 as for any clock gone.
    const { position } = await this.commands.execute(new DeleteTestClock(caller.partnerId, params.test_clock_id, caller));
    await this.progress.waitFor([TEST_CLOCKS], position);
    if (clock.deletedAt) throw new NotFound('test clock not found');
    return { status: 'success', test_clock: { ...toTestClock(clock), deleted: true } };
  }

  /** The caller's sandbox's clock; another's, none, or (unless asked for) a deleted one, is not found. */
  private async clock(caller: Caller, clockId: string, { deleted = false } = {}): Promise<TestClockView> {
    const clock = await this.views.findById<TestClockView>(TEST_CLOCKS, clockId);
    if (!clock || (clock.deletedAt && !deleted) || clock.partnerId !== accountOf(caller.partnerId))
      throw new NotFound('test clock not found');
    return clock;
  }
}

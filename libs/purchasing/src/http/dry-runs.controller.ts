import { CatalogLinks } from '@deals/catalog';
import { AnswersDryRuns, ApiAnswer, ApiRequest, CalledBy, Caller, CurrentCaller, PARTNERS } from '@deals/wire';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { BuyWithStoredCard } from '../commands/buy-with-stored-card/buy-with-stored-card.command';
import { FullPurchase } from '../commands/full-purchase/full-purchase.command';
import { DryRunStoredCardBody } from './buy-with-stored-card.request';
import { DryRunAnswer, toDryRun } from './dry-run.answers';
import { DryRunFullPurchaseBody } from './full-purchase.request';

const MAKES_NOTHING =
  'Answers what the purchase would be (DryRunAnswer), or the refusal it would get with the same status and body, ' +
  "and makes nothing: no purchase, hold, charge or kept Idempotency-Key. A processor's decline is not foreseen.";

/**
 * The dry runs of the two purchase calls, each an operation of its own with its own answer: the
 * purchase's body, checked and decided by the purchase's own code, nothing made. Every call is a
 * dry run (`AnswersDryRuns`): its `Idempotency-Key` is neither claimed nor kept.
 */
@ApiTags('purchasing')
@Controller()
export class DryRunsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly catalog: CatalogLinks,
  ) {}

  @Post('purchases/dry_run')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Dry run of buying with a stored card',
    description: `The body of POST /purchases. ${MAKES_NOTHING}`,
  })
  @ApiAnswer(DryRunAnswer, { errors: [404, 409, 422] })
  @ApiRequest({ body: DryRunStoredCardBody })
  @AnswersDryRuns()
  async buy(@Body() order: DryRunStoredCardBody, @CurrentCaller() caller: Caller) {
    const outcome = await this.commands.execute(new BuyWithStoredCard(order, caller, null));
    if (!outcome.preview) throw new Error('a dry run of POST /purchases answered no preview');
    return toDryRun(outcome.preview, this.catalog);
  }

  @Post('v1/purchases/full/dry_run.json')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Dry run of buying in one call',
    description: `The body of POST /v1/purchases/full.json. ${MAKES_NOTHING} It makes no user or card: it names those that exist only.`,
  })
  @ApiAnswer(DryRunAnswer, { errors: [404, 409, 422] })
  @ApiRequest({ body: DryRunFullPurchaseBody })
  @AnswersDryRuns()
  async full(@Body() order: DryRunFullPurchaseBody, @CurrentCaller() caller: Caller) {
    const outcome = await this.commands.execute(new FullPurchase(order, caller, null));
    if (!outcome.preview) throw new Error('a dry run of POST /v1/purchases/full.json answered no preview');
    return toDryRun(outcome.preview, this.catalog);
  }
}

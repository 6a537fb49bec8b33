import { Clock, IdGenerator, NotFound, ViewProgress } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, CalledBy } from '@deals/wire';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ReportCardTransactionPhase } from '../commands/card-link.commands';
import { CARD_LINK_DETAILS } from '../projections/card-link-details/card-link-details.projection';
import { CARD_TRANSACTIONS } from '../projections/card-transactions/card-transactions.projection';
import { CardLinkQueries } from '../queries/card-link.queries';
import { CardTransactionAnswer, toCardTransaction } from './card-links.answers';
import { TestCardTransactionBody } from './card-links.request';

/** What a sandbox may simulate that only the outside world makes happen live: a card network's reports. */
@ApiTags('sandbox')
@Controller('v1/test_helpers')
export class TestHelpersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly links: CardLinkQueries,
    private readonly progress: ViewProgress,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  @Post('card_transactions')
  @CalledBy('sandbox')
  @HttpCode(200)
  @ApiOperation({
    summary: "Simulate a card transaction on a sandbox's card link",
    description:
      'Test credentials only (live ones: 403). Reports a phase of a transaction as the card network would, through the same rules as ' +
      '`PUT /card_links/:card_link_id/transactions/:transaction_reference`: the link redeems, fulfils and reverses, with its events and webhooks. ' +
      '`transaction_reference` and `transaction_date` default to a new reference and now; report the later phases of one transaction under its `id`.',
  })
  @ApiAnswer(CardTransactionAnswer, { errors: [403, 404, 422] })
  @ApiRequest({ body: TestCardTransactionBody })
  async cardTransaction(@Body() body: TestCardTransactionBody, @CurrentCaller() caller: Caller) {
    const now = this.clock.now();
    const reference = body.transaction_reference ?? `test_${this.ids.short()}`;
    const date = body.transaction_date ?? { text: now.toISOString(), at: now };
    const report = {
      phase: body.phase,
      amountCents: body.transaction_amount,
      date: date.text,
      at: date.at,
      maxRedemption: body.max_redemption === true,
      ...(body.merchant === undefined ? {} : { merchant: body.merchant }),
    };
    const { position } = await this.commands.execute(
      new ReportCardTransactionPhase(body.card_link_id, reference, report, undefined, caller),
    );
    await this.progress.waitFor([CARD_TRANSACTIONS, CARD_LINK_DETAILS], position);
    const transaction = await this.links.transaction(caller.partnerId, body.card_link_id, reference);
    if (!transaction) throw new NotFound('card transaction not found');
    return { status: 'success', card_transaction: toCardTransaction(transaction) };
  }
}

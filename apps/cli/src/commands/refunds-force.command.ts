import { OPERATOR } from '@deals/kernel';
import { REFUND_REASONS, RefundPurchase, RefundReason, RefundSteps, refundOf } from '@deals/purchasing';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';

interface Options {
  coupons?: string[];
  reason: RefundReason;
  note: string;
  json?: boolean;
}

@Command({
  name: 'refunds:force',
  arguments: '<purchase_id>',
  description:
    "refund a purchase's coupons the rules keep (redeemed, expired, shipped goods) as well as the others: the operator's decision, recorded with its reason and note",
})
export class RefundsForceCommand extends CommandRunner {
  constructor(
    private readonly commands: CommandBus,
    private readonly refunds: RefundSteps,
  ) {
    super();
  }

  async run([purchaseId]: string[], options: Options): Promise<void> {
    const purchase = await this.refunds.purchase(purchaseId);
    if (purchase.status === 'none') {
      process.stderr.write(`no purchase ${purchaseId}\n`);
      process.exitCode = 1;
      return;
    }
    const terms = { couponIds: options.coupons ?? null, reason: options.reason, note: options.note, forced: true };
    const caller = { ...OPERATOR, actor: 'operator:refunds:force', partnerId: purchase.partnerId };
    const { refundId } = await this.commands.execute(new RefundPurchase(purchaseId, terms, caller));
    const refund = refundOf(await this.refunds.purchase(purchaseId), refundId)!;
    const out = {
      refund_id: refundId,
      purchase_id: purchaseId,
      coupon_ids: refund.couponIds,
      amount: refund.amountCents,
      state: refund.state,
    };
    if (options.json) return void process.stdout.write(`${JSON.stringify(out)}\n`);
    process.stdout.write(
      `refund ${refundId} of purchase ${purchaseId}: ${out.state}, ${out.amount} cents, coupons ${out.coupon_ids.join(', ')}\n`,
    );
  }

  @Option({ flags: '--coupons <ids>', description: 'comma-separated coupon ids (default: every coupon not refunded yet)' })
  parseCoupons(value: string): string[] {
    const ids = value
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    if (!ids.length) throw new Error('--coupons names no coupon');
    return ids;
  }

  @Option({ flags: '--reason <reason>', description: `one of ${REFUND_REASONS.join(', ')}`, required: true })
  parseReason(value: string): RefundReason {
    if (!(REFUND_REASONS as readonly string[]).includes(value)) throw new Error(`--reason must be one of ${REFUND_REASONS.join(', ')}`);
    return value as RefundReason;
  }

  @Option({ flags: '--note <text>', description: 'why the rules are set aside: kept with the refund', required: true })
  parseNote(value: string): string {
    if (!value.trim()) throw new Error('--note is required: say why the rules are set aside');
    return value.slice(0, 500);
  }

  @Option({ flags: '--json', description: 'print the refund as JSON' })
  parseJson(): boolean {
    return true;
  }
}

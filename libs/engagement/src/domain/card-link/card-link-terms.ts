/**
 * A card-linked deal's terms (the deal's card-linked fields) as they stood when the user linked:
 * what each of the link's transactions earns is decided by these, whatever the deal says later.
 * Cents and whole percents; null where the deal does not say.
 */
export interface CardLinkTerms {
  minSpend: number | null;
  incentiveAmount: number | null;
  incentivePercentage: number | null;
  maximumAllowance: number | null;
  numQualifying: number | null;
  fixedFee: number | null;
  percentFee: number | null;
}

/** What one transaction earns on a link that has already earned `earned` cents from `qualifying` transactions. */
export interface RedemptionOutcome {
  /** At least `min_spend`. */
  qualifies: boolean;
  /** The user's incentive, cents: 0 when the transaction does not qualify or the allowance is spent. */
  incentiveCents: number;
  /** The partner's fee for this redemption, cents: 0 when the transaction does not qualify. */
  feeCents: number;
  /** The link is fulfilled by this transaction. */
  fulfils: 'max_redemption' | 'num_qualifying' | null;
}

/** A percentage of an amount in cents, rounded down (never more than the terms give). */
const percentOf = (cents: number, percent: number) => Math.floor((cents * percent) / 100);

/**
 * The arithmetic of a redemption (docs/decisions.md, "Card links"): a transaction below `min_spend`
 * does not qualify and earns nothing; one that qualifies earns `incentive_amount`, or else
 * `incentive_percentage` of its amount, but never more than what is left of `maximum_allowance`
 * over the link's whole life; the partner's fee is `fixed_fee` plus `percent_fee` of the amount.
 * The link is fulfilled by `max_redemption`, or by its `num_qualifying`-th qualifying transaction.
 */
export function redemptionOutcome(
  terms: CardLinkTerms,
  link: { earned: number; qualifying: number },
  amountCents: number,
  maxRedemption: boolean,
): RedemptionOutcome {
  const qualifies = amountCents >= (terms.minSpend ?? 0);
  let incentiveCents = 0;
  let feeCents = 0;
  if (qualifies) {
    incentiveCents =
      terms.incentiveAmount !== null
        ? terms.incentiveAmount
        : terms.incentivePercentage !== null
          ? percentOf(amountCents, terms.incentivePercentage)
          : 0;
    if (terms.maximumAllowance !== null) incentiveCents = Math.max(0, Math.min(incentiveCents, terms.maximumAllowance - link.earned));
    feeCents = (terms.fixedFee ?? 0) + percentOf(amountCents, terms.percentFee ?? 0);
  }
  const qualifying = link.qualifying + (qualifies ? 1 : 0);
  const fulfils = maxRedemption
    ? 'max_redemption'
    : terms.numQualifying !== null && terms.numQualifying > 0 && qualifying >= terms.numQualifying
      ? 'num_qualifying'
      : null;
  return { qualifies, incentiveCents, feeCents, fulfils };
}

/** What a cleared transaction keeps once `keptCents` of its amount is left after a refund. */
export interface RefundOutcome {
  /** Still at least `min_spend` (and above 0): it still counts towards the link. */
  qualifies: boolean;
  incentiveReversedCents: number;
  feeReversedCents: number;
}

/**
 * A refund's arithmetic (docs/decisions.md, "Card links"): the transaction keeps what its amount
 * left would have earned when it cleared, never more than it did earn (the allowance it used stays
 * used by what it keeps); the rest of its incentive and fee is reversed. Below `min_spend`, or
 * nothing left, it keeps nothing and no longer counts.
 */
export function refundOutcome(
  terms: CardLinkTerms,
  cleared: { qualifies: boolean; incentiveCents: number; feeCents: number },
  keptCents: number,
): RefundOutcome {
  const qualifies = cleared.qualifies && keptCents > 0 && keptCents >= (terms.minSpend ?? 0);
  let incentiveKept = 0;
  let feeKept = 0;
  if (qualifies) {
    const earns =
      terms.incentiveAmount !== null
        ? terms.incentiveAmount
        : terms.incentivePercentage !== null
          ? percentOf(keptCents, terms.incentivePercentage)
          : 0;
    incentiveKept = Math.min(cleared.incentiveCents, earns);
    feeKept = Math.min(cleared.feeCents, (terms.fixedFee ?? 0) + percentOf(keptCents, terms.percentFee ?? 0));
  }
  return { qualifies, incentiveReversedCents: cleared.incentiveCents - incentiveKept, feeReversedCents: cleared.feeCents - feeKept };
}

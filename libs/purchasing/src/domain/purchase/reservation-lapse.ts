/** What tells whether a reservation's hold lapsed: its expiry, and whether it was sold before. */
export interface ReservationHold {
  /** The hold's expiry, ISO 8601 (null: none known). */
  holdExpiresAt: string | null;
  /**
   * The hold's own units were sold to it (a claim of the live hold, its record maybe still to
   * come): they never went back to stock. Fresh units a claim took after the lapse do not count.
   */
  holdSold: boolean;
}

/**
 * Whether a reservation's units are back in stock at `now` because its hold lapsed unclaimed. The
 * inventory stops counting a hold at its expiry, whether or not its release job ran, so from that
 * instant the reservation reads as one its partner released (payment pending, fulfilment released);
 * a claim may still buy fresh units for it. Only a reservation lapses so: a card purchase and a
 * resale are settled on their own paths, whatever their hold does.
 */
export function reservationLapsed({ holdExpiresAt, holdSold }: ReservationHold, now: number): boolean {
  return !holdSold && holdExpiresAt !== null && Date.parse(holdExpiresAt) <= now;
}

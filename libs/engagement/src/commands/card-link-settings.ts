/** Settings of card links, from the service configuration. */
export abstract class CardLinkSettings {
  /** How long before a link was made a transaction may be dated and still count as after it (partners' clocks drift), ms. */
  abstract readonly clockSkewMs: number;
}

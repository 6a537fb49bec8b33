import { Decider, DomainCommand, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import type { CardLinkageEvent, CardLinkCreation } from './card-link.events';

/** `maxLinkage`: the deal's `max_linkage` now (null: no limit). */
export type TakeLinkagePlace = DomainCommand<'TakeLinkagePlace', CardLinkCreation & { maxLinkage: number | null }>;
export type ReturnLinkagePlace = DomainCommand<'ReturnLinkagePlace', { dealId: string; cardLinkId: string; userId: string }>;
export type CardLinkageCommand = TakeLinkagePlace | ReturnLinkagePlace;

/**
 * The places of one card-linked deal: each user that linked it holds one, for good. Unlinking does
 * not give the place back (docs/decisions.md "Card links"): `max_linkage` bounds the users who can
 * ever earn from the deal, and a user who unlinked relinks without competing for a place.
 */
export interface CardLinkage {
  /** The link of each user holding a place, as it was made. A persistent map: the state is shared by a stream's commands. */
  places: ImmutableMap<string, CardLinkCreation>;
}

/** The deal has no place left for a new user. */
export const linkageFull = (dealId: string, maxLinkage: number) =>
  new ValidationFailed([
    {
      type: 'invalid',
      resource: 'card_link',
      field: 'deal_id',
      // eslint-disable-next-line no-restricted-syntax -- the deal's limit, ours
      message: `the deal has no place left: its max_linkage of ${maxLinkage} users have linked it`,
    },
  ]);

export const cardLinkageDecider: Decider<CardLinkage, CardLinkageCommand, CardLinkageEvent> = {
  initialState: () => ({ places: ImmutableMap<string, CardLinkCreation>() }),
  decide(command, linkage) {
    switch (command.type) {
      case 'TakeLinkagePlace': {
        const { maxLinkage, ...creation } = command.data;
        // The user's place, if it has one, is its link: never a second.
        if (linkage.places.has(creation.userId)) return [];
        if (maxLinkage !== null && linkage.places.size >= maxLinkage) throw linkageFull(creation.dealId, maxLinkage);
        return [{ type: 'CardLinkPlaceTaken', data: creation }];
      }
      case 'ReturnLinkagePlace': {
        const { dealId, cardLinkId, userId } = command.data;
        return linkage.places.get(userId)?.cardLinkId === cardLinkId
          ? [{ type: 'CardLinkPlaceReturned', data: { dealId, cardLinkId, userId } }]
          : [];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(linkage, event) {
    switch (event.type) {
      case 'CardLinkPlaceTaken':
        return { places: linkage.places.set(event.data.userId, event.data) };
      case 'CardLinkPlaceReturned':
        return linkage.places.get(event.data.userId)?.cardLinkId === event.data.cardLinkId
          ? { places: linkage.places.delete(event.data.userId) }
          : linkage;
      default:
        return ignoredEvent(event, linkage);
    }
  },
};

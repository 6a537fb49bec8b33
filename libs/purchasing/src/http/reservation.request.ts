import { requestDto, requiredText } from '@deals/wire';
import { z } from 'zod';
import { MAX_UNITS_PER_PURCHASE } from '../domain/inventory/unit-counts';
import { quantity } from './full-purchase.request';

/** POST /purchases/reserve: the deal and how many units to hold. */
export const reserveUnitsBody = z
  .object({
    deal_id: requiredText('the deal whose units to hold').meta({ example: 'chicago-spa-day' }),
    num_bought: quantity.meta({ type: 'integer', minimum: 1, maximum: MAX_UNITS_PER_PURCHASE, description: 'units to hold', example: 2 }),
  })
  .meta({ 'x-resource': 'purchase' });

export class ReserveUnitsBody extends requestDto(reserveUnitsBody) {}

/** The claim: the user the reservation is sold to. */
export const claimReservationBody = z
  .object({ user_id: requiredText('the buyer, a user of this partner').meta({ example: 'u4Kd8' }) })
  .meta({ 'x-resource': 'purchase' });

export class ClaimReservationBody extends requestDto(claimReservationBody) {}

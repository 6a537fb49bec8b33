import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { WEBHOOK_ENDPOINTS, WebhookEndpointView } from '../projections/webhook-endpoints/webhook-endpoints.projection';

/** The questions asked of the webhook endpoints' view. */
@Injectable()
export class WebhookEndpointQueries {
  constructor(private readonly views: ViewStore) {}

  /** A partner's endpoint, deleted ones left out. */
  async endpoint(partnerId: string, endpointId: string): Promise<WebhookEndpointView | null> {
    return findOfPartner<WebhookEndpointView>(this.views, WEBHOOK_ENDPOINTS, endpointId, partnerId, (doc) => !doc.deleted);
  }

  /** Any endpoint by id, deleted ones too (a delivery's). */
  byId(endpointId: string): Promise<WebhookEndpointView | null> {
    return this.views.findById<WebhookEndpointView>(WEBHOOK_ENDPOINTS, endpointId);
  }

  ofPartner(partnerId: string): Promise<WebhookEndpointView[]> {
    return this.views.find<WebhookEndpointView>(WEBHOOK_ENDPOINTS, { partnerId, deleted: false }, { sort: { createdAt: 1 } });
  }
}

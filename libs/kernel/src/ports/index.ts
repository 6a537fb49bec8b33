export * from './event-store.port';
export * from './view-store.port';
export * from './scheduler.port';
export * from './clock.port';
export * from './id-generator.port';
export * from './payment-gateway.port';
export * from './mailer.port';
export * from './snapshot-store.port';

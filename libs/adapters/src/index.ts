export * from './adapters.module';
export { SqliteEventStore } from './event-store/sqlite/sqlite-event-store.adapter';
export { MingoViewStore } from './view-store/mingo/mingo-view-store.adapter';
export { OutboxMailer } from './mailer/outbox/outbox-mailer.adapter';
export { PostgresEventStore } from './event-store/postgres/postgres-event-store.adapter';
export { PostgresViewStore } from './view-store/postgres/postgres-view-store.adapter';
export type { BullmqScheduler } from './scheduler/bullmq/bullmq-scheduler.adapter';
export { SqliteSnapshotStore } from './snapshot-store/sqlite-snapshot-store.adapter';
export { PostgresSnapshotStore } from './snapshot-store/postgres-snapshot-store.adapter';

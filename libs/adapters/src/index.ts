export * from './adapters.module';
export { SqliteEventStore } from './event-store/sqlite/sqlite-event-store.adapter';
export { MingoViewStore } from './view-store/mingo/mingo-view-store.adapter';

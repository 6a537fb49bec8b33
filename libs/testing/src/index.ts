export * from './decider-spec';
export * from './projection-spec';
export * from './contracts/event-store.contract';
export * from './contracts/scheduler.contract';
export * from './contracts/view-store.contract';
export * from './workflow-spec';
export * from './memory-event-store';
export * from './sample-projections';

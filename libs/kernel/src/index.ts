export * from './ports';
export * from './decider';
export * from './errors';
export * from './handle-command';
export * from './keyed-mutex';
export * from './projection';
export * from './projection-runner';
export * from './geo';

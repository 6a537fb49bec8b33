export * from './error-body';
export * from './error.filter';
export * from './get-body';
export * from './https-front';
export * from './partner-auth.guard';
export * from './wire-time';
export * from './request-log';
export * from './paging';

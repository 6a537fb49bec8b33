/** Composition of the service's processes: configuration, the shared core, demo data. */
export * from './service-config';
export * from './service-core.module';
export * from './projection-host';
export * from './projections';
export * from './catalogue-import';
export * from './demo-seed';
export * from './service-metrics';
export { operatorPassword } from './operator-credentials';
export * from './job-list';
export { formatProjectionStatus, projectionStatus } from './embedded-status';
export type { ProjectionStatusRow } from './embedded-status';
export { installationSecret } from './installation-secret';
export { underFolderLock, writeWhole } from './shared-folder';
export { defaultPublicBaseUrl, linkBaseUrl, localApiUrl, recordApiAddress, runningApiAddress } from './api-address';
export type { ApiAddress } from './api-address';
export { HistorySealing } from './history-sealing';
export { prepareServers, startFailure } from './prepare-servers';

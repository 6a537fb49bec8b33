import { DatabaseMissingError, ensurePostgresDatabase } from '@deals/adapters';
import { ConfigError, ServiceConfig } from './service-config';

/** What a process does before its modules start: the PostgreSQL database made when it is missing. */
export async function prepareServers(config: ServiceConfig): Promise<void> {
  if (config.databaseUrl) await ensurePostgresDatabase(config.databaseUrl);
}

/** Why a process could not start: a setting or server the operator must mend in one line, anything else with its stack. */
export function startFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof DatabaseMissingError) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

import { DatabaseMissingError, ensurePostgresDatabase } from '@deals/adapters';
import { ConfigError, ServiceConfig } from './service-config';

/**
 * What the API and the worker do before their modules start: the PostgreSQL database made when it
 * is missing. Said in the process's log when it was made (a mistyped DATABASE_URL would otherwise
 * start a new installation unnoticed). The CLI makes none: a mistyped command must not make one.
 */
export async function prepareServers(config: ServiceConfig): Promise<string | null> {
  if (!config.databaseUrl) return null;
  return (await ensurePostgresDatabase(config.databaseUrl)) === 'created'
    ? 'the database of DATABASE_URL did not exist: made it (a new installation starts empty)'
    : null;
}

/** Why a process could not start: a setting or server the operator must mend in one line, anything else with its stack. */
export function startFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof DatabaseMissingError) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

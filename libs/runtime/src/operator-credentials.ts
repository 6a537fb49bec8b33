import { installationSecret } from './installation-secret';
import { ServiceConfig } from './service-config';

/**
 * The password of the operator's credentials (user `operator`, HTTP basic) for `/metrics` and
 * `/admin/queues`: `OPERATOR_PASSWORD`, or else one made for the installation and kept with its
 * secrets (`DATA_DIR/secrets/operator.key`), so that every process sharing the data folder agrees.
 */
export function operatorPassword(config: ServiceConfig): string {
  return config.operatorPassword ?? installationSecret(config.dataDir, 'operator').subarray(0, 24).toString('base64url');
}

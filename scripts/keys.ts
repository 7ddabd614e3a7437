/**
 * `npm run keys -- create --name NAME [--admin] ... | list | revoke ID`: the API key command of
 * src/jobs/apiKeys/keysCli.ts (compiled with the service, so the container image has it too).
 */
import '../src/jobs/apiKeys/keysCli.js';

/**
 * Let's Encrypt's production directory: the default CA of `--domain`. Apart from acme.ts so
 * that the settings can name it without loading the ACME client (`hark serve` starts faster).
 */
export const LETS_ENCRYPT = 'https://acme-v02.api.letsencrypt.org/directory'

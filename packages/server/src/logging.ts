/**
 * Structured logs (pino). One line per request with the route *pattern* (never the URL: a
 * URL holds the label, a user's identifier), the status and the time taken; publishes log
 * counts and timings. Nothing logs a key, a token, a label or a value, and the redaction list
 * below is a second line of defence should a header or option object ever reach a log call.
 */

import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Paths pino replaces with "[redacted]" wherever they appear in a log object. */
export const REDACTED_PATHS = [
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'authorization',
  'publishToken',
  '*.publishToken',
  'token',
  '*.token',
  'secretKey',
  '*.secretKey',
  'vrfKey',
  '*.vrfKey',
];

/**
 * A pino logger for the server: JSON lines on `destination` (default stdout).
 *
 * @example
 * ```ts
 * const app = await buildApp({ directory, logger: createLogger({ level: 'info' }) });
 * ```
 */
export function createLogger(
  options: { level?: string } = {},
  destination?: DestinationStream,
): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: 'akd-server' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination === undefined ? pino(config) : pino(config, destination);
}

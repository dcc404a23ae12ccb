/**
 * Tool answers of structured content alone, for a client that declares it reads them.
 */
export const STRUCTURED_ONLY_EXTENSION = 'io.github.svc-relay/structured-only';

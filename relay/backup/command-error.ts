/**
 * A failure of `svc-relay backup` or `svc-relay restore` the operator can act on: one message
 * saying what is wrong and what to do next, and the exit code.
 *
 * Exit codes: 2 when the command line names something unusable (a missing file, a file that is
 * not a backup, a data directory that is not empty, a checkpoint log that does not match);
 * 1 when the work itself failed (a disk error, a copy that does not check).
 */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

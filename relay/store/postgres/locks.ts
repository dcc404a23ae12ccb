/**
 * The advisory lock keys every relay process sharing one PostgreSQL database agrees on. An
 * advisory lock is a number the database locks for whoever asks first; the keys are fixed
 * constants (the bytes of a short ASCII tag) so that any version of the relay takes the same
 * lock for the same purpose.
 */

/** The relay's write lock: taken by `transaction(...).immediate()` right after BEGIN (transaction scope). */
export const WRITE_LOCK = 0x7376_6377_7269_7465n; // 'svcwrite'

/** Held (session scope) while migrations run, so two relay processes starting at once migrate once. */
export const MIGRATE_LOCK = 0x7376_636d_6967_7261n; // 'svcmigra'

/** Held (session scope) for one checkpointer pass, so one relay process signs each range. */
export const CHECKPOINTER_LOCK = 0x7376_6363_6b70_6e74n; // 'svcckpnt'

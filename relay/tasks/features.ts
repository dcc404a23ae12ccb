/**
 * The task features svc serves beyond API 0.1, by the names `GET /v1/capabilities` gives them
 * (modules.tasks.features), and the one part of the public service's task API it leaves out:
 * funding (a task's deposits, payouts and billing). svc's work spaces carry no money, so a
 * client reads `funding: "unsupported"` instead of meeting unknown routes.
 */
export const TASK_FEATURES = ['tasks.get', 'tasks.history', 'tasks.change', 'tasks.retire', 'tasks.after_waiting'] as const;

/** The capabilities entry saying that task funding, deposits and billing are not served. */
export const TASK_FUNDING = 'unsupported' as const;

/**
 * Where the key directory is: `$SVC_HOME`, else `~/.svc`. Apart from keys.ts so that the
 * one-file bridge's entry (bridge/bundle-main.ts) finds its compile cache there without loading
 * what a KEY needs.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * A setting from the environment, or undefined when it is unset, empty or a placeholder an MCP
 * Bundle host left unfilled: such a host passes `${user_config.NAME}` as it is when the person
 * left that optional setting empty (relay/documents/mcpb.ts).
 */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const given = env[name];
  return given === undefined || given === '' || /^\$\{user_config\.[^}]*\}$/.test(given) ? undefined : given;
}

/** `$SVC_HOME`, else `~/.svc`. */
export function keyHome(env: NodeJS.ProcessEnv = process.env): string {
  return envSetting(env, 'SVC_HOME') ?? join(homedir(), '.svc');
}

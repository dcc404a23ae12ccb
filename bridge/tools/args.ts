/**
 * A tool's argument object: strict (an argument the tool does not take is refused, never
 * ignored), and the refusal names every argument the tool takes, so an agent that guessed a
 * name (`space_name`, `query`) can correct the call from the error alone. The MCP SDK checks
 * arguments before the tool runs and sends zod's messages back as the tool error's text.
 */
import { z } from 'zod';

export function toolArgs<S extends z.ZodRawShape>(shape: S) {
  const takes = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown argument ${issue.keys.map((k) => `"${k}"`).join(', ')}; this tool takes ${takes}` : undefined,
  });
}

/**
 * Whether objects that should be alike share one V8 hidden class (map) with fast properties.
 * An accessor defined with a new closure per object gives each object a map of its own, then
 * dictionary properties; and V8 keeps that closure, and everything it holds, alive through the
 * next young-generation collection. Uses V8's `%HasFastProperties` and `%HaveSameMap`, enabled for
 * the functions compiled after the flag is set.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('a', 'return %HasFastProperties(a);') as (a: object) => boolean;
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b);') as (a: object, b: object) => boolean;

/** Every one of `objects` has fast properties, and all share the first one's map. */
export function oneHiddenClass(objects: readonly object[]): boolean {
  return objects.every((o) => hasFastProperties(o) && haveSameMap(o, objects[0]!));
}

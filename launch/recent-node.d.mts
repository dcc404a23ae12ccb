/** Types of launch/recent-node.mjs (plain JavaScript, so that Node 18 and 20 load it without a build). */
export declare const NODE_NEEDED: { readonly major: 22; readonly minor: 13 };
export declare const NODE_FETCHED: 24;
export declare const EXIT_NODE_TOO_OLD: 1;
export declare function nodeIsRecentEnough(version: string): boolean;
export declare function shellWord(word: string): string;
export declare function nodePackageName(platform?: string, arch?: string): string;
export declare function nodeHome(cache: string): string;
export interface FetchedNode {
  readonly bin: string;
  readonly version: string;
}
export declare function findOrFetchNode(
  env?: NodeJS.ProcessEnv,
  announce?: (home: string) => void,
): { node: FetchedNode; fetched: boolean; home: string } | { node?: undefined; why: string; home: string };
export declare function relaunchLine(program: string, found: string, node: FetchedNode | undefined, home: string, fetching: boolean): string;
export declare function cannotRunLine(program: string, found: string, why: string): string;
export declare function requireNode(
  program: string,
  cannot?: (line: string) => void,
  options?: { script?: string; args?: readonly string[]; env?: NodeJS.ProcessEnv },
): boolean;

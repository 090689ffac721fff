/** Problems found in the content manifests, and how they are reported. */

/** One problem in the content, located by file and field path. */
export interface ContentIssue {
  file: string;
  /** Field path such as `[3].drops.table[0].itemId`; empty for the whole file. */
  path: string;
  message: string;
}

/** One readable line for an issue: `npcs.json: [3].drops.table[0].itemId: unknown item "bronze_sord"`. */
export function formatIssue(i: ContentIssue): string {
  return `${i.file}: ${i.path ? `${i.path}: ` : ""}${i.message}`;
}

/** At most this many problems are listed; the rest are counted in a last line. */
const MAX_LISTED_ISSUES = 50;

/** Thrown when the content is missing, malformed or inconsistent. `problems` (and the message)
 * hold one line per issue: `npcs.json: [3].drops.table[0].itemId: unknown item "bronze_sord"`. */
export class ContentError extends Error {
  override readonly name = "ContentError";
  /** One readable line per problem (the entry point prints them one per line). */
  readonly problems: string[];
  constructor(readonly issues: readonly ContentIssue[]) {
    const lines = issues.slice(0, MAX_LISTED_ISSUES).map(formatIssue);
    if (issues.length > MAX_LISTED_ISSUES) lines.push(`(and ${issues.length - MAX_LISTED_ISSUES} more)`);
    super(lines.join("\n"));
    this.problems = lines;
  }
}

/** Formats a zod path as `[3].drops.table[0].itemId`. */
export function formatPath(p: readonly PropertyKey[]): string {
  let out = "";
  for (const k of p) out += typeof k === "number" ? `[${k}]` : out === "" ? String(k) : `.${String(k)}`;
  return out;
}

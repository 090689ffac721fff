/**
 * The documentation holds together: every relative link of the README, docs/ and the benchmark
 * results reaches a file (and, with a #fragment, a heading of it), every section a code comment
 * names exists, and the README stays a front door (at most 300 lines). docs/contributing.md "Tests".
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const README_MAX_LINES = 300;

/** Folders whose code may point at a documented section (besides the top-level config files), and the files that count as code. */
const CODE_ROOTS = ["src", "rooms", "entities", "schema", "scripts", "loadtest", "test", "client", "examples", ".ci"];
const CODE_FILE = /\.(ts|mts|cts|mjs|cjs|js)$|^run$/;
const SKIP_DIRS = new Set(["node_modules", "dist", "dist-test", "test-results", "results", ".cache"]);

function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (!SKIP_DIRS.has(name)) walk(full, keep, out);
    } else if (keep(name)) out.push(full);
  }
  return out;
}

/** The Markdown files whose links are checked: the README, docs/ and the benchmark results. */
function markdownFiles(): string[] {
  return [
    path.join(ROOT, "README.md"),
    ...walk(path.join(ROOT, "docs"), (n) => n.endsWith(".md")),
    ...walk(path.join(ROOT, "loadtest"), (n) => n.endsWith(".md")),
  ];
}

/** Lines outside fenced code blocks (``` or ~~~), each with its 1-based number. */
function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, i) => {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m) {
      const mark = m[1]!;
      if (fence === null) fence = mark[0]!.repeat(mark.length);
      else if (mark.startsWith(fence)) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/** What a heading's text renders as: links reduced to their text, code and emphasis marks dropped. */
function rendered(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim();
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, each space a hyphen. */
function slug(text: string): string {
  return rendered(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

const anchorCache = new Map<string, Set<string>>();

/** Every anchor a Markdown text defines: its headings' slugs (repeats numbered as GitHub does) and `<a id>`s. */
function anchorsIn(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  return anchors;
}

function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) anchorCache.set(file, (anchors = anchorsIn(readFileSync(file, "utf8"))));
  return anchors;
}

const rel = (file: string): string => path.relative(ROOT, file);

/** The broken relative links of one Markdown file, as `file:line: link (why)`. */
function brokenLinks(file: string, text = readFileSync(file, "utf8")): string[] {
  const broken: string[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [pathPart, fragment] = target.split("#", 2) as [string, string | undefined];
      const where = `${rel(file)}:${n}: ${target}`;
      if (pathPart === "") {
        if (fragment && !anchorsIn(text).has(fragment)) broken.push(`${where} (no heading #${fragment} here)`);
        continue;
      }
      const resolved = path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(resolved)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (fragment === undefined || fragment === "") continue;
      if (!resolved.endsWith(".md")) broken.push(`${where} (a fragment on a file that is not Markdown)`);
      else if (!anchorsOf(resolved).has(fragment)) broken.push(`${where} (no heading #${fragment} in ${rel(resolved)})`);
    }
  }
  return broken;
}

/**
 * The forms a code comment uses to point at a section: `README "Heading"`, `README.md#anchor`,
 * `docs/<page>.md "Heading"` and `docs/<page>.md#anchor` (also loadtest/RESULTS.md).
 */
const REFERENCE = /\b((?:docs\/[a-z0-9-]+|loadtest\/(?:[a-z]+\/)?RESULTS|README)(?:\.md)?)(?:#([A-Za-z0-9_-]+)| "([^"\n]+)")/g;

/** Within docs/, a page names a sibling without the folder: `persistence.md "Leaving"`. */
const SIBLING_REFERENCE = /(?<![\w/.-])([a-z0-9-]+\.md)(?:#([A-Za-z0-9_-]+)| "([^"\n]+)")/g;

/** The broken section references of one text (a code file, or a Markdown page), as `file:line: reference (why)`. */
function brokenReferences(file: string, text: string): string[] {
  const broken: string[] = [];
  const inDocs = path.dirname(file) === path.join(ROOT, "docs");
  text.split("\n").forEach((line, i) => {
    const found = [...line.matchAll(REFERENCE)].map((m) => ({ m, name: m[1]!.endsWith(".md") ? m[1]! : `${m[1]!}.md` }));
    if (inDocs) for (const m of line.matchAll(SIBLING_REFERENCE)) found.push({ m, name: `docs/${m[1]!}` });
    for (const { m, name } of found) {
      const doc = path.join(ROOT, name);
      const where = `${rel(file)}:${i + 1}: ${m[0]}`;
      if (!existsSync(doc)) {
        broken.push(`${where} (no file ${name})`);
        continue;
      }
      const anchor = m[2] ?? slug(m[3]!);
      if (!anchorsOf(doc).has(anchor)) broken.push(`${where} (no heading #${anchor} in ${name})`);
    }
  });
  return broken;
}

describe("docs: links and section references", () => {
  it(`README.md is a front door of at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(path.join(ROOT, "README.md"), "utf8").trimEnd().split("\n").length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines`);
  });

  it("every relative link of the README, docs/ and loadtest/*.md reaches a file and a heading", () => {
    const files = markdownFiles();
    assert.ok(files.length > 10, "found the Markdown pages");
    assert.deepEqual(
      files.flatMap((f) => brokenLinks(f)),
      [],
    );
  });

  it("every section a code comment names exists (README, docs/<page>.md: by heading or #anchor)", () => {
    const self = fileURLToPath(import.meta.url);
    const topLevel = readdirSync(ROOT)
      .filter((n) => CODE_FILE.test(n) && statSync(path.join(ROOT, n)).isFile())
      .map((n) => path.join(ROOT, n));
    const files = [...topLevel, ...CODE_ROOTS.flatMap((d) => walk(path.join(ROOT, d), (n) => CODE_FILE.test(n)))].filter((f) => f !== self);
    assert.ok(files.length > 100, "found the code");
    let references = 0;
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      references += [...text.matchAll(REFERENCE)].length;
      broken.push(...brokenReferences(file, text));
    }
    assert.ok(references > 100, `found the references (${references})`);
    assert.deepEqual(broken, []);
  });

  it("the Markdown pages name sections of each other the same way, and those exist", () => {
    assert.deepEqual(
      markdownFiles().flatMap((f) => brokenReferences(f, readFileSync(f, "utf8"))),
      [],
    );
  });

  it("finds a broken link, a missing heading and a missing section", () => {
    const page = path.join(ROOT, "docs", "example.md");
    const links = brokenLinks(page, "# Here\n\n[a](no-such-page.md) [b](protocol.md#no-such-heading) [c](protocol.md#limits) [d](#here) [e](#nowhere)\n");
    assert.equal(links.length, 3, links.join("\n"));
    assert.match(links[0]!, /no-such-page\.md \(no such file\)/);
    assert.match(links[1]!, /no heading #no-such-heading in docs\/protocol\.md/);
    assert.match(links[2]!, /#nowhere \(no heading #nowhere here\)/);
    const code = ['// see docs/operations.md "No such section" and README.md#nowhere', '// see docs/operations.md "Settings", docs/nothing.md#x'].join("\n");
    const refs = brokenReferences(path.join(ROOT, "src", "example.ts"), code);
    assert.equal(refs.length, 3, refs.join("\n"));
    assert.match(refs[0]!, /no heading #no-such-section in docs\/operations\.md/);
    assert.match(refs[1]!, /no heading #nowhere in README\.md/);
    assert.match(refs[2]!, /no file docs\/nothing\.md/);
  });

  it("slugs headings as GitHub does", () => {
    assert.equal(slug("`player:sync` and `world:update`, field by field"), "playersync-and-worldupdate-field-by-field");
    assert.equal(slug("Load testing with @colyseus/loadtest"), "load-testing-with-colyseusloadtest");
    assert.equal(slug("Social graph, deaths and kills (`/api/player`)"), "social-graph-deaths-and-kills-apiplayer");
    assert.equal(slug("Two processes, one world each (`npm run bench:scale`)"), "two-processes-one-world-each-npm-run-benchscale");
    assert.equal(slug("The crowd's cadence"), "the-crowds-cadence");
  });
});

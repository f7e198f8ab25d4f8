import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Comments and documents cite the contract and the code by file: `docs/spec/channel-api.md §4.5`,
 * `docs/spec/DECISIONS.md`, `docs/decisions.md`, `src/services/bookings/states.ts`. Every cited
 * file is in the repository, so a reader can follow the citation, and a move that leaves a citation
 * behind fails here. In code only comments are read (see commentOf).
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const SCANNED = ['src', 'rest-adapters', 'clients', 'test', 'scripts', 'bench', 'docs', 'prisma', 'README.md', '.dependency-cruiser.cjs'];
const SKIPPED = new Set(['node_modules', 'generated', 'spec', 'migrations']);

function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).flatMap((name) => (SKIPPED.has(name) ? [] : filesUnder(join(path, name))));
}

/** Generated from the served documents (npm run client:generate): their comments are served text, not citations. */
const GENERATED = new Set(['clients/typescript/v1.ts', 'clients/typescript/v2.ts']);
const scanned = SCANNED.flatMap(filesUnder).filter((f) => /\.(ts|md|cjs|prisma)$/.test(f));
const files = scanned.filter((f) => !GENERATED.has(f));
const allFiles = [...new Set([...scanned, ...filesUnder('docs/spec')])];
const basenames = new Set(allFiles.map((f) => basename(f)));

interface Finding {
  file: string;
  line: number;
  text: string;
}

/**
 * The comment part of a line of code: served text (an OpenAPI description, say) may cite the
 * specification as partners know it, so only comments are held to repository paths.
 */
function commentOf(line: string): string {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('*') || trimmed.startsWith('//') || trimmed.startsWith('/*')) return line;
  const trailing = line.indexOf(' // ');
  return trailing >= 0 ? line.slice(trailing) : '';
}

function findAll(pattern: RegExp, keep: (match: RegExpExecArray, file: string) => boolean): Finding[] {
  const found: Finding[] = [];
  for (const file of files) {
    if (file === 'test/contract/citations.test.ts') continue;
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const text = file.endsWith('.md') ? line : commentOf(line);
      for (const match of text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))) {
        if (keep(match as RegExpExecArray, file)) found.push({ file, line: i + 1, text: match[0] });
      }
    });
  }
  return found;
}

describe('citations', () => {
  it('the contract is in the repository', () => {
    expect(existsSync(join(ROOT, 'docs/spec/channel-api.md'))).toBe(true);
    expect(existsSync(join(ROOT, 'docs/spec/DECISIONS.md'))).toBe(true);
    expect(existsSync(join(ROOT, 'docs/decisions.md'))).toBe(true);
  });

  it('a section of the specification is cited with its file (docs/spec/channel-api.md §N)', () => {
    const bare = findAll(/(?:^|[^\w/.-])(?:the )?spec(?:ification)?,? §\s*\d/i, () => true);
    expect(bare).toEqual([]);
  });

  it('the project decisions are cited as docs/spec/DECISIONS.md', () => {
    const bare = findAll(/(?<![\w/.-])DECISIONS\.md/, () => true);
    expect(bare).toEqual([]);
  });

  it('nothing cites a file outside the repository (../shared)', () => {
    expect(findAll(/\.\.\/shared\//, () => true)).toEqual([]);
  });

  it('every file cited by its path exists', () => {
    const missing = findAll(/(?<![\w/.@-])(?:src|rest-adapters|test|docs|scripts|bench|prisma)\/[\w./-]*\w\.(?:ts|md|json|prisma|cjs)\b/, (m, file) => {
      const cited = m[0];
      if (cited.includes('/generated/')) return false;
      return !existsSync(join(ROOT, cited)) && !existsSync(join(ROOT, relative(ROOT, join(ROOT, file, '..', cited))));
    });
    expect(missing).toEqual([]);
  });

  it('every file cited by its name alone exists somewhere in the repository', () => {
    const missing = findAll(/(?<![\w/.@-])[A-Za-z][\w-]*\.(?:ts|md)\b/, (m) => {
      const name = m[0];
      if (/^(?:[a-z]+\.config|README|CHANGELOG|LICENSE)\./.test(name)) return false;
      return !basenames.has(name);
    });
    expect(missing).toEqual([]);
  });
});

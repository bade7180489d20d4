/**
 * Where two XML trees part: the path of each differing element or attribute, with both values
 * (null on the side where it is missing). Children are paired by name, in order, so one missing
 * element is reported once rather than shifting every sibling after it.
 */
import type { ShadowPath } from '../store/shadow-types.js';
import type { XmlNode } from '../xml/xml-tree.js';

/** Paths reported per comparison, at most: enough to see the pattern. */
export const MAX_PATHS = 50;
/** Characters of a value shown. */
const MAX_VALUE = 500;
/** Pairing by longest common subsequence costs n×m: past this, children are paired by position. */
const MAX_ALIGN_CELLS = 250_000;

export function diffTrees(legacy: XmlNode, ours: XmlNode): ShadowPath[] {
  const out: ShadowPath[] = [];
  diffNodes(legacy, ours, `/${legacy.local}`, out);
  return out;
}

function diffNodes(a: XmlNode, b: XmlNode, path: string, out: ShadowPath[]): void {
  if (out.length >= MAX_PATHS) return;
  if (a.key !== b.key) return void out.push({ path, legacy: describe(a), ours: describe(b) });
  const names = [...new Set([...a.attrs.keys(), ...b.attrs.keys()])].sort();
  for (const name of names) {
    const x = a.attrs.get(name);
    const y = b.attrs.get(name);
    if (x?.value !== y?.value && out.length < MAX_PATHS)
      out.push({ path: `${path}/@${(x ?? y)!.local}`, legacy: clip(x?.value ?? null), ours: clip(y?.value ?? null) });
  }
  if (a.text !== b.text && out.length < MAX_PATHS) out.push({ path, legacy: clip(a.text), ours: clip(b.text) });
  const legacyNames = siblingNames(a.children);
  const ourNames = siblingNames(b.children);
  for (const [i, j] of align(a.children, b.children)) {
    if (out.length >= MAX_PATHS) return;
    if (i !== null && j !== null) diffNodes(a.children[i]!, b.children[j]!, `${path}/${legacyNames[i]!}`, out);
    else if (i !== null) out.push({ path: `${path}/${legacyNames[i]!}`, legacy: describe(a.children[i]!), ours: null });
    else out.push({ path: `${path}/${ourNames[j!]!}`, legacy: null, ours: describe(b.children[j!]!) });
  }
}

/** `name`, or `name[n]` (from 1, as XPath) where the name repeats among the siblings. */
function siblingNames(children: readonly XmlNode[]): string[] {
  const total = new Map<string, number>();
  for (const c of children) total.set(c.key, (total.get(c.key) ?? 0) + 1);
  const seen = new Map<string, number>();
  return children.map((c) => {
    const n = (seen.get(c.key) ?? 0) + 1;
    seen.set(c.key, n);
    return total.get(c.key)! > 1 ? `${c.local}[${n}]` : c.local;
  });
}

type Pair = readonly [number | null, number | null];

/** Index pairs in order: both set for paired children, one null for a child on one side only. */
function align(a: readonly XmlNode[], b: readonly XmlNode[]): Pair[] {
  const same = a.length === b.length && a.every((x, i) => x.key === b[i]!.key);
  if (same || a.length * b.length > MAX_ALIGN_CELLS) return byPosition(a.length, b.length);
  // Longest common subsequence of the names, then walked from the start.
  const rows = a.length + 1;
  const cols = b.length + 1;
  const table = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * cols + j] =
        a[i]!.key === b[j]!.key
          ? table[(i + 1) * cols + j + 1]! + 1
          : Math.max(table[(i + 1) * cols + j]!, table[i * cols + j + 1]!);
    }
  }
  const pairs: Pair[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]!.key === b[j]!.key) pairs.push([i++, j++]);
    else if (table[(i + 1) * cols + j]! >= table[i * cols + j + 1]!) pairs.push([i++, null]);
    else pairs.push([null, j++]);
  }
  while (i < a.length) pairs.push([i++, null]);
  while (j < b.length) pairs.push([null, j++]);
  return pairs;
}

function byPosition(n: number, m: number): Pair[] {
  const pairs: Pair[] = [];
  for (let k = 0; k < Math.max(n, m); k++) pairs.push([k < n ? k : null, k < m ? k : null]);
  return pairs;
}

/** A leaf's text; an element with children, as compact markup. */
function describe(node: XmlNode): string {
  return clip(node.children.length === 0 && node.attrs.size === 0 ? node.text : markup(node, MAX_VALUE + 1))!;
}

function markup(node: XmlNode, budget: number): string {
  let text = `<${node.local}`;
  for (const { local, value } of node.attrs.values()) text += ` ${local}="${value}"`;
  text += '>';
  for (const child of node.children) {
    if (text.length > budget) break;
    text += markup(child, budget - text.length);
  }
  return `${text}${node.text}</${node.local}>`;
}

export function clip(value: string | null): string | null {
  if (value === null || value.length <= MAX_VALUE) return value;
  return `${value.slice(0, MAX_VALUE)}… (${value.length} characters)`;
}

/**
 * Where two XML trees part: the path of each differing element or attribute, with both values
 * (null on the side where it is missing). Children are paired by name, in order, so one missing
 * element is reported once rather than shifting every sibling after it. Items of a list whose type
 * declares a key (StructSpec.key) are paired by it: a missing or extra item is one path naming its
 * key (`StudentInfo[id_student="17"]`), a changed field a path under it, and the same items in
 * another order one path, `order:` and the list's path (unless the order is ignored).
 */
import type { ShadowPath } from '../store/shadow-types.js';
import type { XmlNode } from '../xml/xml-tree.js';

/** Paths reported per comparison, at most: enough to see the pattern. */
export const MAX_PATHS = 50;
/** Characters of a value shown. */
const MAX_VALUE = 500;
/** Pairing by longest common subsequence costs n×m: past this, children are paired by position. */
const MAX_ALIGN_CELLS = 250_000;

/** How list items are paired: the key field of each keyed item element, by its name; and whether order counts. */
export interface ListPairing {
  readonly keys: ReadonlyMap<string, string>;
  readonly order: 'report' | 'ignore';
}

export const BY_POSITION: ListPairing = { keys: new Map(), order: 'report' };

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

export function diffTrees(legacy: XmlNode, ours: XmlNode, lists: ListPairing = BY_POSITION): ShadowPath[] {
  const out: ShadowPath[] = [];
  diffNodes(legacy, ours, `/${legacy.local}`, out, lists);
  return out;
}

function diffNodes(a: XmlNode, b: XmlNode, path: string, out: ShadowPath[], lists: ListPairing): void {
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
  const key = listKey(a, b, lists);
  if (key !== null) return diffKeyed(a.children, b.children, path, key, out, lists);
  diffChildren(a.children, b.children, path, out, lists);
}

/** Children paired by name in order (a longest common subsequence), named `name[n]` where a name repeats. */
function diffChildren(
  a: readonly XmlNode[],
  b: readonly XmlNode[],
  path: string,
  out: ShadowPath[],
  lists: ListPairing,
): void {
  const legacyNames = siblingNames(a);
  const ourNames = siblingNames(b);
  for (const [i, j] of align(a, b)) {
    if (out.length >= MAX_PATHS) return;
    if (i !== null && j !== null) diffNodes(a[i]!, b[j]!, `${path}/${legacyNames[i]!}`, out, lists);
    else if (i !== null) out.push({ path: `${path}/${legacyNames[i]!}`, legacy: describe(a[i]!), ours: null });
    else out.push({ path: `${path}/${ourNames[j!]!}`, legacy: null, ours: describe(b[j!]!) });
  }
}

/** The key field when every child on both sides is an item of one keyed type, else null. */
function listKey(a: XmlNode, b: XmlNode, lists: ListPairing): { item: string; field: string } | null {
  const first = a.children[0] ?? b.children[0];
  if (first === undefined) return null;
  const field = lists.keys.get(first.local);
  if (field === undefined) return null;
  const same = (c: XmlNode): boolean => c.key === first.key;
  return a.children.every(same) && b.children.every(same) ? { item: first.local, field } : null;
}

/** An item's key, or null for one without (a nil item, the field left out). */
function keyOf(item: XmlNode, field: string): string | null {
  if (item.attrs.get(`{${XSI}}nil`)?.value === 'true') return null;
  const value = item.children.find((c) => c.local === field);
  return value === undefined ? null : value.text;
}

/**
 * Items paired by key: each key's first item on either side (a repeated key's later items are
 * paired as unkeyed ones), then the items without a key by position among themselves.
 */
function diffKeyed(
  a: readonly XmlNode[],
  b: readonly XmlNode[],
  path: string,
  key: { item: string; field: string },
  out: ShadowPath[],
  lists: ListPairing,
): void {
  const split = (items: readonly XmlNode[]): { keyed: Map<string, XmlNode>; rest: XmlNode[] } => {
    const keyed = new Map<string, XmlNode>();
    const rest: XmlNode[] = [];
    for (const item of items) {
      const k = keyOf(item, key.field);
      if (k === null || keyed.has(k)) rest.push(item);
      else keyed.set(k, item);
    }
    return { keyed, rest };
  };
  const legacy = split(a);
  const ours = split(b);
  const step = (k: string): string => `${path}/${key.item}[${key.field}=${JSON.stringify(k)}]`;
  const shared = [...legacy.keyed.keys()].filter((k) => ours.keyed.has(k));
  const ourOrder = [...ours.keyed.keys()].filter((k) => legacy.keyed.has(k));
  if (lists.order === 'report' && shared.some((k, i) => k !== ourOrder[i]) && out.length < MAX_PATHS)
    out.push({ path: `order:${path}`, legacy: clip(shared.join(', ')), ours: clip(ourOrder.join(', ')) });
  for (const [k, item] of legacy.keyed) {
    if (out.length >= MAX_PATHS) return;
    const other = ours.keyed.get(k);
    if (other !== undefined) diffNodes(item, other, step(k), out, lists);
    else out.push({ path: step(k), legacy: describe(item), ours: null });
  }
  for (const [k, item] of ours.keyed) {
    if (out.length >= MAX_PATHS) return;
    if (!legacy.keyed.has(k)) out.push({ path: step(k), legacy: null, ours: describe(item) });
  }
  diffChildren(legacy.rest, ours.rest, path, out, lists);
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

import { SaxesParser } from 'saxes';

/** A parsed element: enough of a DOM for tests to read answers. */
export interface El {
  readonly ns: string;
  readonly local: string;
  readonly attrs: ReadonlyMap<string, string>;
  readonly children: El[];
  text: string;
}

/** Parses a whole document strictly (throws on anything not well-formed). */
export function parseXml(xml: string): El {
  const parser = new SaxesParser({ xmlns: true });
  const stack: El[] = [];
  let root: El | undefined;
  parser.on('error', (e) => {
    throw e;
  });
  parser.on('opentag', (t) => {
    const attrs = new Map<string, string>();
    for (const a of Object.values(t.attributes)) attrs.set(a.uri === '' ? a.local : `{${a.uri}}${a.local}`, a.value);
    const el: El = { ns: t.uri, local: t.local, attrs, children: [], text: '' };
    stack.at(-1)?.children.push(el);
    root ??= el;
    stack.push(el);
  });
  parser.on('text', (t) => {
    const top = stack.at(-1);
    if (top) top.text += t;
  });
  parser.on('closetag', () => stack.pop());
  parser.write(xml).close();
  if (root === undefined) throw new Error('no root element');
  return root;
}

export function child(el: El, local: string): El | undefined {
  return el.children.find((c) => c.local === local);
}

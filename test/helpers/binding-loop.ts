/**
 * The binding loop: every operation of a list, over every binding, against a real server serving
 * exactly that list, with the same expectations for all four. The contract's operations go through
 * it (test/operations/operations.test.ts), and so do test-only ones
 * (test/operations/operations-added-by-one-entry.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BindingName } from '../../src/bindings/types.js';
import type { ResultValue } from '../../src/contract/types.js';
import type { Operation } from '../../src/operations/index.js';
import type { Dataset } from '../../src/store/store.js';
import { bindingClients } from './binding-clients.js';
import type { PlainArgs } from './binding-clients.js';
import { startTestServer } from './test-server.js';
import type { TestServer } from './test-server.js';

export interface BindingCase {
  /** What the case shows, completing "<operation> …" in the test's name. */
  readonly title: string;
  /** The arguments, the same for every binding or made per binding (to tell the calls apart in the store). */
  readonly args: PlainArgs | ((binding: BindingName) => PlainArgs);
  /** The value every binding must read back; undefined for a void operation. */
  readonly expected: ResultValue;
  /** Further checks once answered: what a void operation did, for instance. */
  readonly check?: (seen: {
    readonly server: TestServer;
    readonly binding: BindingName;
    readonly calledAt: number;
  }) => void;
}

/** An operation's cases, by operation name. */
export type BindingCases = Readonly<Record<string, readonly BindingCase[]>>;

export interface BindingLoop {
  readonly operations: readonly Operation[];
  readonly cases: BindingCases;
  readonly dataset?: Dataset;
  /** Whether the server is given `operations` (a test-only one among them) or serves the contract's own. */
  readonly serve?: 'given' | 'contract';
}

/** Operations without a case, and cases naming no operation: what would go untested. */
export function missingCases(operations: readonly Operation[], cases: BindingCases): string[] {
  const names = new Set(operations.map((o) => o.name));
  return [
    ...operations
      .filter((o) => (cases[o.name]?.length ?? 0) === 0)
      .map((o) => `${o.service}.${o.name} has no binding case`),
    ...Object.keys(cases)
      .filter((name) => !names.has(name))
      .map((name) => `cases for ${name}, which is not served`),
  ];
}

/** Registers the loop as tests of the current file under `label`. */
export function operationsOverEveryBinding(label: string, loop: BindingLoop): void {
  describe(label, () => {
    it('has a case for every operation, and no case for an operation it does not serve', () => {
      assert.deepEqual(missingCases(loop.operations, loop.cases), []);
    });

    for (const client of bindingClients) {
      describe(`every operation over ${client.name}`, () => {
        let server: TestServer;
        before(async () => {
          server = await startTestServer({
            ...(loop.dataset === undefined ? {} : { dataset: loop.dataset }),
            ...(loop.serve === 'contract' ? {} : { operations: loop.operations }),
          });
        });
        after(() => server.close());

        for (const op of loop.operations) {
          for (const c of loop.cases[op.name] ?? []) {
            it(`${op.service}.${op.name} ${c.title}`, async () => {
              const args = typeof c.args === 'function' ? c.args(client.name) : c.args;
              const calledAt = Date.now();
              const { res, value } = await client.call(server.url, op, args);
              assert.equal(res.status, 200, res.body.toString());
              if (op.result.kind === 'void') assertVoid(op, client.name, res.body, res.headers);
              else assert.deepEqual(value, c.expected);
              c.check?.({ server, binding: client.name, calledAt });
            });
          }
        }
      });
    }
  });
}

/** A void answer as ASMX writes it: an empty response element in SOAP, nothing at all (not even a Content-Type) in GET/POST. */
function assertVoid(op: Operation, binding: BindingName, body: Buffer, headers: ReadonlyMap<string, string>): void {
  if (binding === 'httpget' || binding === 'httppost') {
    assert.equal(body.length, 0);
    assert.equal(headers.get('content-type'), undefined, 'void GET/POST answers carry no Content-Type');
  } else {
    assert.match(body.toString(), new RegExp(`<${op.name}Response xmlns="http://tempuri.org/" />`));
  }
}

